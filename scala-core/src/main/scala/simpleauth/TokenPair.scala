package simpleauth

/** What [[TokenSigner.issue]] returns for one login: the two tokens (contract §2) and their lifetime in seconds. */
final case class TokenPair(accessToken: String, idToken: String, expiresIn: Long) {
  override def toString: String = s"TokenPair(${expiresIn}s, ***)" // never a token
}
