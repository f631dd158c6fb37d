package simpleauth

import java.util.UUID

import zio.*

/** What `POST /token` answers on success: the signed pair and the session's new refresh token. */
final case class IssuedTokens(pair: TokenPair, refreshToken: String)

/**
 * The flows of `POST /token` and `POST /revoke` (contract §1, §7, §8). The password grant: the client address's
 * lock → the user and the username's lock (one query) → the password (a failure counted for both) → a new session
 * → the token pair. The refresh grant: the token's shape → rotation (or reuse detection) → the token pair.
 */
trait TokenService:
  /** `address`: the client address (the core's `ClientAddress`), the key of the per-address limit; None if there is none. */
  def issue(request: TokenRequest, address: Option[String]): IO[ApiError, IssuedTokens]
  /** Revokes the family of a well-formed refresh token; anything else is not looked up. */
  def revoke(request: RevokeRequest): IO[ApiError, Unit]

object TokenService:
  def issue(request: TokenRequest, address: Option[String] = None): ZIO[TokenService, ApiError, IssuedTokens] =
    ZIO.serviceWithZIO[TokenService](_.issue(request, address))

  def revoke(request: RevokeRequest): ZIO[TokenService, ApiError, Unit] =
    ZIO.serviceWithZIO[TokenService](_.revoke(request))

  val live: URLayer[UserRepository & SessionRepository & PasswordVerifier & KeyRing & UnusableHashLog & AddressLimiter & Settings, TokenService] =
    ZLayer.fromFunction {
      (users: UserRepository, sessions: SessionRepository, verifier: PasswordVerifier, signer: KeyRing, unusable: UnusableHashLog,
       addresses: AddressLimiter, cfg: Settings) => Live(users, sessions, verifier, signer, unusable, addresses, cfg.defaultClientId)
    }

  final case class Live(
      users: UserRepository,
      sessions: SessionRepository,
      verifier: PasswordVerifier,
      signer: KeyRing,
      unusable: UnusableHashLog,
      addresses: AddressLimiter,
      defaultClientId: String
  ) extends TokenService:
    private val unavailable = ApiError.TemporarilyUnavailable

    /**
     * Locked to the executor it starts on (ZIO's default one): the lookup and argon2id run on the blocking pool,
     * and a fiber that is not locked stays on the blocking thread once such a call returns (ZIO's rule, see
     * zio/zio#8368), so the password check and the signing after it would run there, on many blocking threads
     * sharing the cores. Locked, the fiber comes back to the default executor's threads, one per core.
     */
    def issue(request: TokenRequest, address: Option[String]): IO[ApiError, IssuedTokens] =
      onOwnExecutor(request match
        case p: TokenRequest.Password => login(p, address)
        case r: TokenRequest.Refresh  => refresh(r)
      )

    def revoke(request: RevokeRequest): IO[ApiError, Unit] =
      if !RefreshToken.isWellFormed(request.token) then ZIO.unit
      else onOwnExecutor(sessions.revoke(RefreshToken.hash(request.token)).orElseFail(unavailable).unit)

    private def onOwnExecutor[A](flow: IO[ApiError, A]): IO[ApiError, A] = ZIO.executorWith(flow.onExecutor(_))

    // ---------------------------------------------------------------- the password grant

    private def login(request: TokenRequest.Password, address: Option[String]): IO[ApiError, IssuedTokens] =
      for
        _      <- addresses.check(address).flatMap(refuse(Metrics.Rejection.AddressLocked))
        lookup <- users.findForLogin(request.username).orElseFail(unavailable)
        _      <- refuse(Metrics.Rejection.UsernameLocked)(lookup.lockedForSeconds)
        user   <- authenticate(lookup.user, request.password).tapError {
                    case ApiError.InvalidGrant =>
                      addresses.failed(address) *> users.recordFailure(request.username).orElseFail(unavailable)
                    // authenticate asks no database: its only 503 is a check shed by the overload limit, a failure of
                    // the address (contract §8) so that a flood of logins this instance cannot afford to check locks
                    // its address; not of the username (no write per shed request)
                    case ApiError.TemporarilyUnavailable => addresses.failed(address)
                    case _                               => ZIO.unit
                  }
        tokens <- startSession(request.username, user, request.clientId.getOrElse(defaultClientId))
      yield tokens

    /** 429 with the lock's seconds left, counted with its reason; nothing if not locked. */
    private def refuse(reason: Metrics.Rejection)(lockedFor: Option[Long]): IO[ApiError, Unit] =
      ZIO.foreachDiscard(lockedFor)(s => Metrics.rejected(reason) *> ZIO.fail(ApiError.TooManyFailedLogins(s)))

    /**
     * The user, if the password matches; otherwise `invalid_grant`, the same for every reason. Unknown users and
     * users whose stored hash is unusable (disabled, unknown scheme) pay for one argon2id verification too, so
     * timing does not reveal who exists.
     */
    private def authenticate(user: Option[User], password: String): IO[ApiError, User] =
      user match
        case None => verifier.verifyUnknownUser(password) *> ZIO.fail(ApiError.InvalidGrant)
        case Some(u) =>
          verifier.verify(password, u.passwordHash).flatMap {
            case Verification.Match            => ZIO.succeed(u)
            case Verification.Mismatch         => ZIO.fail(ApiError.InvalidGrant)
            case Verification.Unusable(reason) => report(u, reason) *> ZIO.fail(ApiError.InvalidGrant)
          }

    /** An unusable stored hash, in this service's log: WARN at the user's first refused login, DEBUG after. */
    private def report(user: User, reason: String): UIO[Unit] =
      ZIO.succeed(unusable.firstReport(user)).flatMap { first =>
        if first then ZIO.logWarning(UnusableHashLog.warning(user, reason)) else ZIO.logDebug(UnusableHashLog.detail(user, reason))
      }

    /** A new family (its id the tokens' `sid`) with its first refresh token; the username's failures cleared. */
    private def startSession(username: String, user: User, clientId: String): IO[ApiError, IssuedTokens] =
      val sid   = UUID.randomUUID()
      val token = RefreshToken.generate()
      sessions.start(username, RefreshToken.hash(token), sid, user.id, clientId).orElseFail(unavailable) *>
        signer.issue(user, Some(clientId), sid).map(IssuedTokens(_, token))

    // ---------------------------------------------------------------- the refresh grant

    private def refresh(request: TokenRequest.Refresh): IO[ApiError, IssuedTokens] =
      if !RefreshToken.isWellFormed(request.refreshToken) then ZIO.fail(ApiError.InvalidRefreshToken)
      else
        val presented = RefreshToken.hash(request.refreshToken)
        val next      = RefreshToken.generate()
        sessions.rotate(presented, request.clientId, RefreshToken.hash(next)).orElseFail(unavailable).flatMap {
          case None =>
            // Not marked: unknown, expired, revoked, another client's — or used before, which revokes its family.
            sessions.revokeUsed(presented).orElseFail(unavailable).flatMap { revoked =>
              Metrics.rejected(Metrics.Rejection.RefreshReuse).when(revoked > 0)
            } *> ZIO.fail(ApiError.InvalidRefreshToken)
          case Some(rotated) if PasswordHashes.isUnusable(rotated.user.passwordHash) =>
            // A disabled (or broken) user: the token was just marked used, so this revokes the family.
            sessions.revokeUsed(presented).orElseFail(unavailable) *> ZIO.fail(ApiError.InvalidRefreshToken)
          case Some(rotated) =>
            signer.issue(rotated.user, Some(rotated.clientId), rotated.familyId).map(IssuedTokens(_, next))
        }
