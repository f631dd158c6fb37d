package simpleauth

import scala.concurrent.{ExecutionContext, Future}

/**
 * The login flow: look the user up, verify the password, issue the token pair. An unknown user, a wrong
 * password and an unusable stored hash all end in `None`, after the same argon2id work, so neither the answer
 * nor its timing tells them apart. A database outage fails the future with [[DatabaseUnavailable]].
 *
 * @param keys            the key ring; each login signs with the key set in service when its password matched
 * @param defaultClientId the access token's `client_id` when the request names none (`DEFAULT_CLIENT_ID`)
 * @param hashingEc bounded dispatcher for password verification and signing (CPU- and memory-heavy, so kept
 *                  off akka's default dispatcher)
 */
final class TokenService(
    users: UserRepository,
    passwords: PasswordVerifier,
    keys: KeyRing,
    unusableHashes: UnusableHashLog,
    hashingEc: ExecutionContext,
    defaultClientId: String = "public"
) {

  /**
   * Lookup (database dispatcher), then verification and signing (hashing dispatcher). The step between them
   * only submits the next task, so it runs on the thread that finished the lookup (`parasitic`) instead of
   * hopping to the default dispatcher first: one thread hand-off per request less.
   */
  def login(request: TokenRequest): Future[Option[TokenPair]] =
    users.findByEmail(request.username).flatMap {
      case None =>
        Future { passwords.verifyUnknownUser(request.password); None }(using hashingEc)
      case Some(user) =>
        Future {
          passwords.verify(request.password, user.passwordHash) match {
            case Verification.Match    => Some(keys.current.signer.issue(user, request.clientId.getOrElse(defaultClientId)))
            case Verification.Mismatch => None
            case Verification.Unusable(reason) =>
              unusableHashes.report(user, reason)
              None
          }
        }(using hashingEc)
    }(using ExecutionContext.parasitic)
}
