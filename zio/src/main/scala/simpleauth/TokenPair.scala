package simpleauth

/** What `TokenSigner.issue` makes; the web layer turns it into the response body. */
final case class TokenPair(accessToken: String, idToken: String, expiresIn: Long)
