package simpleauth

/** Where a password check ran: the stored hash's scheme, or the unknown-user equaliser. */
enum PasswordScheme(val label: String) {
  case Argon2id extends PasswordScheme("argon2id")
  case HmacSha256 extends PasswordScheme("hmac-sha256")
  case Dummy extends PasswordScheme("dummy")
  /** A stored string whose prefix names no scheme this service knows. */
  case Unknown extends PasswordScheme("unknown")
}
