package simpleauth

/** Outcome of checking a password against a stored hash. */
enum Verification:
  case Match
  case Mismatch
  /** The stored string is not a usable hash (a disabled user, an unknown scheme): a data error, never the caller's. */
  case Unusable(reason: String)
