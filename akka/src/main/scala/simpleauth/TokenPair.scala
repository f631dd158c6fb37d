package simpleauth

/** What [[TokenSigner.issue]] returns for one login: the two tokens and their lifetime in seconds. */
final case class TokenPair(accessToken: String, idToken: String, expiresIn: Long)
