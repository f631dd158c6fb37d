package simpleauth

import java.net.InetAddress
import java.security.SecureRandom
import java.util.UUID
import scala.concurrent.{ExecutionContext, Future}
import scala.util.Try

/** What a successful grant answers: the signed pair and the session's new refresh token. */
final case class IssuedTokens(tokens: TokenPair, refreshToken: String) {
  override def toString: String = s"IssuedTokens(${tokens.expiresIn}s, ***)" // never a token
}

/**
 * The two grants and the revocation (contract §1, §7, §8).
 *
 * The password grant, in the contract's order of checks: the client address's limit (in memory) → the user and
 * the username's lock (one query) → the overload limit (argon2id checks only; a shed check counts as a failure of
 * the address, so that a flood of logins this instance cannot afford to check locks its address) → the password → on
 * a match a
 * new session (its first refresh token stored, the failure count cleared) and the signed pair; on a refusal the
 * failure counted for the username (in the database) and the address (in memory). An unknown user, a wrong
 * password and an unusable stored hash are refused alike, after the same argon2id work, so neither the answer nor
 * its timing tells them apart.
 *
 * The refresh grant: the token's shape → rotation (one statement) → the pair for the user as the database has
 * it now; a token rotation does not accept is refused, and revokes its family when it had been used (reuse).
 *
 * Answers are `Right(tokens)` or `Left(the error to answer)`; a database outage fails the future with
 * [[DatabaseUnavailable]].
 *
 * @param keys            the key ring; each grant signs with the key set in service when it is signed
 * @param hashingEc       bounded dispatcher for signing (CPU-heavy, so kept off akka's default dispatcher)
 * @param passwordEc      bounded dispatcher for argon2id checks (CPU- and memory-heavy), apart from signing so that a
 *                        login that has passed its check is never queued behind others' argon2id checks
 * @param addresses       the per-client-address limit of failed logins
 * @param passwordChecks  the overload limit of argon2id checks
 * @param defaultClientId the access token's `client_id` when the request names none (`DEFAULT_CLIENT_ID`)
 */
final class TokenService(
    users: UserRepository,
    sessions: SessionRepository,
    passwords: PasswordVerifier,
    keys: KeyRing,
    unusableHashes: UnusableHashLog,
    hashingEc: ExecutionContext,
    passwordEc: ExecutionContext,
    metrics: Metrics,
    addresses: AddressLimiter,
    passwordChecks: PasswordCheckLimit,
    defaultClientId: String = "public",
    random: SecureRandom = new SecureRandom()
) {
  // The steps between the database and the hashing dispatcher only submit the next task, so they run on the thread
  // that finished the previous one (`parasitic`) instead of hopping to the default dispatcher first.
  private given ExecutionContext = ExecutionContext.parasitic

  def grant(request: TokenRequest, address: Option[InetAddress]): Future[Either[ApiError, IssuedTokens]] =
    request match {
      case password: TokenRequest.Password => login(password, address)
      case refresh: TokenRequest.Refresh   => this.refresh(refresh)
    }

  def login(request: TokenRequest.Password, address: Option[InetAddress]): Future[Either[ApiError, IssuedTokens]] =
    address.flatMap(addresses.lockedFor) match {
      case Some(seconds) => refuse(RejectionReason.AddressLocked, ApiError.tooManyFailedLogins(seconds))
      case None =>
        users.findForLogin(request.username).flatMap {
          case LoginLookup(_, Some(seconds)) => refuse(RejectionReason.UsernameLocked, ApiError.tooManyFailedLogins(seconds))
          case LoginLookup(user, None) =>
            checkPassword(request.password, user) match {
              case None =>
                address.foreach(addresses.recordFailure) // not the username's: no write per shed request
                refuse(RejectionReason.Overload, ApiError.temporarilyUnavailable)
              case Some(checked) =>
                checked.flatMap {
                  case Some(matched) => startSession(request, matched)
                  case None =>
                    address.foreach(addresses.recordFailure)
                    users.recordFailure(request.username).map(_ => Left(ApiError.invalidGrant))
                }
            }
        }
    }

  def refresh(request: TokenRequest.Refresh): Future[Either[ApiError, IssuedTokens]] =
    if (!RefreshToken.isWellFormed(request.refreshToken)) Future.successful(Left(ApiError.invalidRefreshToken))
    else {
      val presented = RefreshToken.hash(request.refreshToken)
      val next = RefreshToken.generate(random)
      sessions.rotate(presented, request.clientId, RefreshToken.hash(next)).flatMap {
        case None =>
          sessions.revokeUsed(presented).map { revoked =>
            if (revoked > 0) metrics.rejection(RejectionReason.RefreshReuse)
            Left(ApiError.invalidRefreshToken)
          }
        case Some(rotation) if PasswordHashes.isUnusable(rotation.user.passwordHash) =>
          // A disabled (or broken) user cannot refresh: the statement above marked the token used, so this ends the family.
          sessions.revokeUsed(presented).map(_ => Left(ApiError.invalidRefreshToken))
        case Some(rotation) =>
          sign(rotation.user, rotation.clientId, rotation.familyId, next)
      }
    }

  /** POST /revoke: ends the family of a well-formed token; nothing is asked of the database for any other value. */
  def revoke(token: String): Future[Unit] =
    if (!RefreshToken.isWellFormed(token)) Future.unit
    else sessions.revokeFamily(RefreshToken.hash(token)).map(_ => ())

  private def refuse(reason: RejectionReason, error: ApiError): Future[Either[ApiError, IssuedTokens]] = {
    metrics.rejection(reason)
    Future.successful(Left(error))
  }

  /**
   * The password check: the matched user, or None for a refusal. An argon2id check (a stored argon2id hash, the
   * unknown-user dummy, the unusable-hash dummy) runs on the password dispatcher and needs a permit of the
   * overload limit, held until it has run; None, before anything is computed, when there is none. A legacy HMAC
   * check (microseconds, cheaper than a signature) runs at once on the thread that finished the lookup.
   */
  private def checkPassword(password: String, user: Option[User]): Option[Future[Option[User]]] = {
    def check(): Option[User] = user match {
      case None =>
        passwords.verifyUnknownUser(password)
        None
      case Some(u) =>
        passwords.verify(password, u.passwordHash) match {
          case Verification.Match    => Some(u)
          case Verification.Mismatch => None
          case Verification.Unusable(reason) =>
            unusableHashes.report(u, reason)
            None
        }
    }
    if (user.exists(u => !PasswordHashes.runsArgon2id(u.passwordHash))) Some(Future.fromTry(Try(check())))
    else passwordChecks.submit(check())(using passwordEc)
  }

  /** A new family with its first refresh token (the username's failure count cleared), then the signed pair. */
  private def startSession(request: TokenRequest.Password, user: User): Future[Either[ApiError, IssuedTokens]] = {
    val family = UUID.randomUUID()
    val refreshToken = RefreshToken.generate(random)
    val clientId = request.clientId.getOrElse(defaultClientId)
    sessions.start(request.username, RefreshToken.hash(refreshToken), family, user.id, clientId)
      .flatMap(_ => sign(user, clientId, family, refreshToken))
  }

  private def sign(user: User, clientId: String, sid: UUID, refreshToken: String): Future[Either[ApiError, IssuedTokens]] =
    Future(Right(IssuedTokens(keys.current.signer.issue(user, clientId, sid), refreshToken)))(using hashingEc)
}
