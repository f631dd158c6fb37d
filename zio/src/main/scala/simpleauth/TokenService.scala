package simpleauth

import java.util.UUID

import zio.*

/** What `POST /token` answers on success: the signed pair and the session's new refresh token. */
final case class IssuedTokens(pair: TokenPair, refreshToken: String)

/**
 * The flows of `POST /token` and `POST /revoke` (contract §1, §7, §8). The password grant, in §8's order: one attempt
 * reserved for the client address (in memory) → one reserved for the username with the user read (statement L) → the
 * check by the stored hash, every argon2id run (real, dummy, decoy) under a permit of the overload limit → on a match
 * the session (statement S) and the token pair. Reservations are given back where §8 says (the address's on a success,
 * a locked username, a database outage; the username's when shed, by statement G); on a failure both stay: they are
 * the failure counts. The refresh grant: the token's shape → rotation (statement R, or reuse detection, U) → the pair.
 */
trait TokenService:
  /** `address`: the key of the per-address limit (the core's `ClientAddress.limitKey`); None if there is none. */
  def issue(request: TokenRequest, address: Option[String]): IO[ApiError, IssuedTokens]
  /** Revokes the family of a well-formed refresh token; anything else is not looked up. */
  def revoke(request: RevokeRequest): IO[ApiError, Unit]

object TokenService:
  def issue(request: TokenRequest, address: Option[String] = None): ZIO[TokenService, ApiError, IssuedTokens] =
    ZIO.serviceWithZIO[TokenService](_.issue(request, address))

  def revoke(request: RevokeRequest): ZIO[TokenService, ApiError, Unit] =
    ZIO.serviceWithZIO[TokenService](_.revoke(request))

  val live: URLayer[UserRepository & SessionRepository & PasswordVerifier & KeyRing & UnusableHashLog & AddressLimiter & Settings & JdbcExecutor, TokenService] =
    ZLayer.fromFunction {
      (users: UserRepository, sessions: SessionRepository, verifier: PasswordVerifier, signer: KeyRing, unusable: UnusableHashLog,
       addresses: AddressLimiter, cfg: Settings, jdbc: JdbcExecutor) =>
        Live(users, sessions, verifier, signer, unusable, addresses, cfg.defaultClientId, jdbc.executor)
    }

  /**
   * `flowExecutor`: what both grants and revocation are locked to, the database's (`Database.executor`, one thread
   * per pooled connection). A password grant thus runs the address check, statement L, the legacy HMAC compare,
   * statement S and the signing as one stretch on the thread that got L: a statement made on that executor needs no
   * shift, where ZIO's blocking pool hands the fiber to another thread for each statement and back to the default
   * executor after it.
   * argon2id still runs on the blocking pool, behind its permits, and the fiber comes back here after it.
   */
  final case class Live(
      users: UserRepository,
      sessions: SessionRepository,
      verifier: PasswordVerifier,
      signer: KeyRing,
      unusable: UnusableHashLog,
      addresses: AddressLimiter,
      defaultClientId: String,
      flowExecutor: Executor
  ) extends TokenService:
    private val unavailable = ApiError.TemporarilyUnavailable

    def issue(request: TokenRequest, address: Option[String]): IO[ApiError, IssuedTokens] =
      (request match
        case p: TokenRequest.Password => login(p, address)
        case r: TokenRequest.Refresh  => refresh(r)
      ).onExecutor(flowExecutor)

    def revoke(request: RevokeRequest): IO[ApiError, Unit] =
      if !RefreshToken.isWellFormed(request.token) then ZIO.unit
      else sessions.revoke(RefreshToken.hash(request.token)).orElseFail(unavailable).unit.onExecutor(flowExecutor)

    // ---------------------------------------------------------------- the password grant

    private def login(request: TokenRequest.Password, address: Option[String]): IO[ApiError, IssuedTokens] =
      reserveAddress(address).flatMap { reservation =>
        val giveBack = ZIO.succeed(addresses.release(reservation))
        // A database outage is not a failure of the address: its reservation goes back, the answer is 503.
        def database[A](step: IO[DatabaseUnavailable, A]): IO[ApiError, A] = step.tapError(_ => giveBack).orElseFail(unavailable)
        for
          lookup <- database(users.reserveLogin(request.username))
          _      <- ZIO.foreachDiscard(lookup.lockedForSeconds)(s => giveBack *> refuse(Metrics.Rejection.UsernameLocked)(Some(s)))
          user   <- authenticate(lookup.user, request.password).tapError {
                      // authenticate asks no database: its only 503 is an argon2id run shed by the overload limit. The
                      // username's reservation goes back (a failure of G changes nothing); the address's stays, so
                      // that a flood of logins this instance cannot afford to check locks its address (§8).
                      case ApiError.TemporarilyUnavailable => users.releaseLogin(request.username).ignore
                      case _                               => ZIO.unit
                    }
          tokens <- startSession(request.username, user, request.clientId.getOrElse(defaultClientId), database)
          _      <- giveBack // a success is not a failure
        yield tokens
      }

    /** One attempt reserved for the address (none without an address); 429 with the seconds left when its window is full. */
    private def reserveAddress(address: Option[String]): IO[ApiError, AddressLimiter.Reservation] =
      address match
        case None => ZIO.succeed(AddressLimiter.Untracked)
        case Some(key) =>
          Clock.nanoTime.flatMap { now =>
            addresses.reserve(key, now) match
              case Right(reservation) => ZIO.succeed(reservation)
              case Left(seconds)      => refuse(Metrics.Rejection.AddressLocked)(Some(seconds)).as(AddressLimiter.Untracked)
          }

    /** 429 with the lock's seconds left, counted with its reason; nothing if not locked. */
    private def refuse(reason: Metrics.Rejection)(lockedFor: Option[Long]): IO[ApiError, Unit] =
      ZIO.foreachDiscard(lockedFor)(s => Metrics.rejected(reason) *> ZIO.fail(ApiError.TooManyFailedLogins(s)))

    /**
     * The user, if the password matches; otherwise `invalid_grant`, the same for every reason. Unknown users, users
     * whose stored hash is unusable (disabled, unknown scheme) and legacy users with a wrong password pay for one
     * argon2id run too (the verifier's), so timing does not reveal who exists or how their password is stored.
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

    /**
     * A new session (its id the tokens' `sid`) bound to the hash the check verified, with its first refresh token; the
     * username's count cleared. `invalid_grant`, as a wrong password, when the user's hash changed since it was read.
     */
    private def startSession(
        username: String,
        user: User,
        clientId: String,
        database: IO[DatabaseUnavailable, Boolean] => IO[ApiError, Boolean]
    ): IO[ApiError, IssuedTokens] =
      val sid   = UUID.randomUUID()
      val token = RefreshToken.generate()
      database(sessions.start(username, RefreshToken.hash(token), sid, user.id, clientId, user.passwordHash)).flatMap { started =>
        if started then signer.issue(user, Some(clientId), sid).map(IssuedTokens(_, token))
        else ZIO.fail(ApiError.InvalidGrant)
      }

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
          case Some(rotated) =>
            // A disabled user's refresh gives no row: disabling changes the stored hash the session is bound to (§6).
            signer.issue(rotated.user, Some(rotated.clientId), rotated.familyId).map(IssuedTokens(_, next))
        }
