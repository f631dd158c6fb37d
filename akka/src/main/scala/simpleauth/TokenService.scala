package simpleauth

import java.net.InetAddress
import java.security.SecureRandom
import java.util.UUID
import scala.concurrent.{ExecutionContext, Future}
import scala.util.{Failure, Success, Try}
import scala.util.control.NonFatal

/** What a successful grant answers: the signed pair and the session's new refresh token. */
final case class IssuedTokens(tokens: TokenPair, refreshToken: String) {
  override def toString: String = s"IssuedTokens(${tokens.expiresIn}s, ***)" // never a token
}

/**
 * The two grants and the revocation (contract §1, §7, §8).
 *
 * The password grant, in the contract's order (§8): reserve an attempt for the client address (in memory; 429 when
 * its window is full) → reserve an attempt for the username and read the user (statement L; 429 when beyond the
 * limit, the address's reservation given back) → the check by the stored hash: argon2id, the unknown user's dummy,
 * the unusable hash's dummy, or the legacy HMAC compare with, on a mismatch, a decoy argon2id — every argon2id run
 * under a permit of the overload limit (none free: 503, the username's reservation given back by statement G, the
 * address's kept) → on a match the session (statement S, bound to the verified hash; the address's reservation given
 * back) and the signed pair; on a refusal both reservations stay: they are the failure counts. Every wrong login
 * costs one argon2id run and answers the same bytes, so neither the answer nor its timing tells the kinds apart.
 *
 * The refresh grant: the token's shape → rotation (statement R) → the pair for the user as the database has it now;
 * a token rotation does not accept is refused, and revokes its family when it had been used (reuse, statement U).
 *
 * Answers are `Right(tokens)` or `Left(the error to answer)`; a database outage fails the future with
 * [[DatabaseUnavailable]].
 *
 * Threads: each step continues on the thread that finished the one before (`parasitic`). With a legacy hash that is
 * the database thread of statement L: the HMAC compare, statement S (which [[JdbcDatabase.call]] runs right there) and
 * the signing follow on it, so a login leaves akka-http's dispatcher once and comes back once. An argon2id run goes to
 * `passwordEc`; the session and the signing after it then go to a database thread.
 *
 * @param keys            the key ring; each grant signs with the key set in service when it is signed
 * @param passwordEc      bounded dispatcher for argon2id checks (CPU- and memory-heavy): one per core at most, so that
 *                        they cannot take the cores from the database threads and akka-http
 * @param addresses       the per-client-address limit
 * @param passwordChecks  the overload limit of argon2id checks
 * @param defaultClientId the tokens' client when the request names none (`DEFAULT_CLIENT_ID`)
 */
final class TokenService(
    users: UserRepository,
    sessions: SessionRepository,
    passwords: PasswordVerifier,
    keys: KeyRing,
    unusableHashes: UnusableHashLog,
    passwordEc: ExecutionContext,
    metrics: Metrics,
    addresses: AddressLimiter,
    passwordChecks: PasswordCheckLimit,
    defaultClientId: String = "public",
    random: SecureRandom = new SecureRandom()
) {
  // Every step after a database call or an argon2id run is short CPU work (an HMAC compare, a signature, JSON) or the
  // next statement, so it runs on the thread that finished the previous one instead of hopping to another pool.
  private given ExecutionContext = ExecutionContext.parasitic

  def grant(request: TokenRequest, address: Option[InetAddress]): Future[Either[ApiError, IssuedTokens]] =
    request match {
      case password: TokenRequest.Password => login(password, address)
      case refresh: TokenRequest.Refresh   => this.refresh(refresh)
    }

  def login(request: TokenRequest.Password, address: Option[InetAddress]): Future[Either[ApiError, IssuedTokens]] =
    address.map(a => addresses.reserve(ClientAddress.limitKey(a))).getOrElse(Right(AddressLimiter.Untracked)) match {
      case Left(seconds) => refuse(RejectionReason.AddressLocked, ApiError.tooManyFailedLogins(seconds))
      case Right(reservation) =>
        val attempt = users.reserveLogin(request.username).transformWith {
          case Failure(e) => Future.failed(e)
          case Success(LoginLookup(_, Some(seconds))) =>
            addresses.release(reservation)
            refuse(RejectionReason.UsernameLocked, ApiError.tooManyFailedLogins(seconds.toLong))
          case Success(LoginLookup(user, None)) =>
            checkPassword(request.password, user) match {
              case None =>
                // Shed: the username's reservation back (a failure of G changes nothing); the address's stays, so that
                // a flood of logins this instance cannot afford to check locks its address.
                users.releaseLogin(request.username).recover { case NonFatal(_) => () }
                  .flatMap(_ => refuse(RejectionReason.Overload, ApiError.temporarilyUnavailable))
              case Some(checked) =>
                checked.flatMap {
                  case Some(matched) =>
                    startSession(request, matched).map { answer =>
                      if (answer.isRight) addresses.release(reservation) // a success is not a failure
                      answer
                    }
                  case None => Future.successful(Left(ApiError.invalidGrant))
                }
            }
        }
        // A database outage is not a failure of the address.
        attempt.transform {
          case failed @ Failure(_: DatabaseUnavailable) =>
            addresses.release(reservation)
            failed
          case other => other
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
        case Some(rotation) =>
          // A disabled user's refresh gives no row: disabling changes the stored hash the session is bound to (§6).
          Future.successful(sign(rotation.user, rotation.clientId, rotation.familyId, next))
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
   * The password check: the matched user, or None for a refusal. Every argon2id run — a stored argon2id hash, the
   * unknown user's dummy, the unusable hash's dummy, the decoy after a legacy mismatch — runs on the password
   * dispatcher and needs a permit of the overload limit, held until it has run; None, before anything is computed,
   * when there is none. The legacy HMAC compare itself (microseconds) runs at once on the thread that finished the
   * lookup, and a legacy match needs no permit.
   */
  private def checkPassword(password: String, user: Option[User]): Option[Future[Option[User]]] = user match {
    case Some(u) if !PasswordHashes.runsArgon2id(u.passwordHash) =>
      Try(passwords.verify(password, u.passwordHash)) match {
        case Failure(e)                   => Some(Future.failed(e))
        case Success(Verification.Match)  => Some(Future.successful(Some(u)))
        case Success(_)                   => passwordChecks.submit { passwords.decoy(password); None }(using passwordEc)
      }
    case _ =>
      passwordChecks.submit {
        user match {
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
      }(using passwordEc)
  }

  /**
   * A new session bound to the hash the check verified, with its first refresh token (the username's count cleared),
   * then the signed pair; `invalid_grant`, as a wrong password, when the user's hash changed since it was read.
   */
  private def startSession(request: TokenRequest.Password, user: User): Future[Either[ApiError, IssuedTokens]] = {
    val family = UUID.randomUUID()
    val refreshToken = RefreshToken.generate(random)
    val clientId = request.clientId.getOrElse(defaultClientId)
    sessions.start(request.username, RefreshToken.hash(refreshToken), family, user.id, clientId, user.passwordHash).map {
      case true  => sign(user, clientId, family, refreshToken)
      case false => Left(ApiError.invalidGrant)
    }
  }

  /**
   * The signed pair, on the calling thread: the database thread that ran the statement before it. A signature is short
   * CPU work (RS256 the longest), and that thread's pool is bounded by the connection pool, so signing there needs no
   * pool of its own and costs no hand-off.
   */
  private def sign(user: User, clientId: String, sid: UUID, refreshToken: String): Either[ApiError, IssuedTokens] =
    Right(IssuedTokens(keys.current.signer.issue(user, clientId, sid), refreshToken))
}
