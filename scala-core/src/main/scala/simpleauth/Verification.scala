package simpleauth

/** The outcome of checking a password against a stored hash. */
enum Verification {
  case Match
  case Mismatch
  /** The stored string is no hash this service can check (a disabled user, an unknown scheme, a malformed hash). */
  case Unusable(reason: String)
}

object Verification {
  /** The `result` label of `simpleauth_password_checks_total`, by the outcome's `ordinal`. */
  val Results: Array[String] = Array("match", "mismatch", "unusable")
}
