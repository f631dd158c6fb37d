package simpleauth

/** What [[TokenSigner.issue]] returns for one login: the two tokens and their lifetime in seconds. */
final case class TokenPair(accessToken: String, idToken: String, expiresIn: Long)

/** What a successful grant answers: the signed pair and the session's new refresh token. */
final case class IssuedTokens(tokens: TokenPair, refreshToken: String) {
  override def toString: String = s"IssuedTokens(${tokens.expiresIn}s, ***)" // never a token
}
