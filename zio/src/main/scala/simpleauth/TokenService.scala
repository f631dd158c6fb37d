package simpleauth

import zio.*

/** The login flow of `POST /token`: look the user up, verify the password, issue the token pair. */
trait TokenService:
  def issue(request: TokenRequest): IO[ApiError, TokenPair]

object TokenService:
  def issue(request: TokenRequest): ZIO[TokenService, ApiError, TokenPair] =
    ZIO.serviceWithZIO[TokenService](_.issue(request))

  val live: URLayer[UserRepository & PasswordVerifier & TokenSigner & UnusableHashLog, TokenService] =
    ZLayer.fromFunction(Live.apply _)

  final case class Live(users: UserRepository, verifier: PasswordVerifier, signer: TokenSigner, unusable: UnusableHashLog)
      extends TokenService:
    /**
     * Locked to the executor it starts on (ZIO's default one): the lookup and argon2id run on the blocking pool,
     * and a fiber that is not locked stays on the blocking thread once such a call returns (ZIO's rule, see
     * zio/zio#8368), so the password check and the signing after it ran there, on 15-28 blocking threads on two
     * cores. Locked, the fiber comes back to the default executor's threads, one per core.
     */
    def issue(request: TokenRequest): IO[ApiError, TokenPair] =
      ZIO.executorWith(login(request).onExecutor(_))

    private def login(request: TokenRequest): IO[ApiError, TokenPair] =
      for
        user  <- users.findByEmail(request.username).orElseFail(ApiError.TemporarilyUnavailable)
        known <- authenticate(user, request.password)
        pair  <- signer.issue(known, request.clientId)
      yield pair

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
            case Verification.Unusable(reason) => unusable.report(u.id, reason) *> ZIO.fail(ApiError.InvalidGrant)
          }
