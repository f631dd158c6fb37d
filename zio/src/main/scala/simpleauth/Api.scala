package simpleauth

import zio.*
import zio.http.*
import zio.json.*

/** The HTTP surface: the endpoints plus explicit 404/405 answers for everything else. */
object Api:
  type Env = UserRepository & PasswordVerifier & TokenSigner

  final case class TokenResponse(access_token: String, id_token: String, token_type: String, expires_in: Long)
  given JsonEncoder[TokenResponse] = DeriveJsonEncoder.gen[TokenResponse]

  /** Paths we serve and the one method each accepts (for 405 + Allow). */
  private val knownPaths: Map[String, Method] = Map(
    "/token"                 -> Method.POST,
    "/health"                -> Method.GET,
    "/health/live"           -> Method.GET,
    "/.well-known/jwks.json" -> Method.GET
  )

  /** Beyond this much body we stop reading and close the connection instead. */
  private val DrainCap = 1L << 20
  private val DrainTimeout = 2.seconds

  private val utf8 = java.nio.charset.StandardCharsets.UTF_8

  private val healthUp = Response(
    Status.Ok,
    Headers(Header.ContentType(MediaType.application.json), Header.CacheControl.NoStore),
    Body.fromArray("""{"status":"up"}""".getBytes(utf8))
  )
  /** `/health` is readiness (asks the database); `/health/live` is liveness and answers `healthUp` without it. */
  private val healthDown = healthUp.copy(status = Status.ServiceUnavailable, body = Body.fromArray("""{"status":"down"}""".getBytes(utf8)))

  /**
   * Everything else gets the contract's 404/405 from `fallback`, which also drains the body. `Method.ANY` stands for
   * the standard methods only, and a route for a custom one beside it hides it; so every method is listed, QUERY
   * (the safe "GET with a body" draft) included. Left to zio-http's own empty 404, a QUERY whose body came after
   * the answer stalled the next request on that keep-alive connection (the fault suite saw a PUT wait 10 s).
   */
  private val fallbackMethods: List[Method] =
    List(Method.GET, Method.HEAD, Method.POST, Method.PUT, Method.DELETE, Method.CONNECT, Method.OPTIONS,
      Method.TRACE, Method.PATCH, Method.CUSTOM("QUERY"))

  val routes: Routes[Env, Nothing] =
    Routes(
      Method.POST / "token"                    -> handler((req: Request) => exactly("/token", req)(token(req))),
      Method.GET / "health"                    -> handler((req: Request) => exactly("/health", req)(health)),
      Method.GET / "health" / "live"           -> handler((req: Request) => exactly("/health/live", req)(ZIO.succeed(healthUp))),
      Method.GET / ".well-known" / "jwks.json" -> handler((req: Request) => exactly("/.well-known/jwks.json", req)(jwks)),
    ) ++ Routes.fromIterable(fallbackMethods.map(m => m / trailing -> handler((req: Request) => fallback(req))))

  // ---------------------------------------------------------------- endpoints

  private def token(req: Request): ZIO[Env, ApiError, Response] =
    for
      kind  <- ZIO.fromOption(TokenRequest.kindOf(req.rawHeader("content-type"))).orElseFail(ApiError.UnsupportedMediaType)
      body  <- readBody(req)
      creds <- ZIO.fromEither(TokenRequest.parse(kind, body))
      user  <- UserRepository.findByEmail(creds.username).mapError(_ => ApiError.TemporarilyUnavailable)
      known <- authenticate(user, creds.password)
      pair  <- TokenSigner.issue(known)
    yield Response(
      Status.Ok,
      Headers(
        Header.ContentType(MediaType.application.json),
        Header.CacheControl.NoStore,
        Header.Custom("Pragma", "no-cache")
      ),
      Body.fromArray(TokenResponse(pair.accessToken, pair.idToken, "Bearer", pair.expiresIn).toJson.getBytes(utf8))
    )

  /**
   * The user, if the password matches; otherwise `invalid_grant`, the same for every reason. Unknown users still
   * pay for one argon2id verification, so timing does not reveal who exists.
   */
  private def authenticate(user: Option[User], password: String): ZIO[PasswordVerifier, ApiError, User] =
    user match
      case None => ZIO.serviceWithZIO[PasswordVerifier](_.verifyDummy(password)) *> ZIO.fail(ApiError.InvalidGrant)
      case Some(u) =>
        PasswordVerifier.verify(password, u.passwordHash).flatMap {
          case Verification.Match            => ZIO.succeed(u)
          case Verification.Mismatch         => ZIO.fail(ApiError.InvalidGrant)
          case Verification.Unusable(reason) =>
            ZIO.logWarning(s"data error: user ${u.id} has an unusable password hash ($reason)") *> ZIO.fail(ApiError.InvalidGrant)
        }

  private val health: URIO[UserRepository, Response] =
    ZIO.serviceWithZIO[UserRepository](_.healthy).map(up => if up then healthUp else healthDown)

  private val jwks: URIO[TokenSigner, Response] =
    ZIO.serviceWith[TokenSigner] { signer =>
      Response(
        Status.Ok,
        Headers(Header.ContentType(MediaType.application.json), Header.Custom("Cache-Control", "public, max-age=300")),
        Body.fromArray(signer.jwksJson.getBytes(utf8))
      )
    }

  private def fallback(req: Request): UIO[Response] =
    val error = knownPaths.get(req.path.encode) match
      case Some(allowed) => ApiError.MethodNotAllowed(allowed)
      case None          => ApiError.NotFound
    drain(req).map(drained => finish(closeUnless(drained)(error.toResponse)))

  // ---------------------------------------------------------------- plumbing

  /** Routes match `/token/` like `/token`; the contract wants 404 for anything but the exact path. */
  private def exactly[R](path: String, req: Request)(run: ZIO[R, ApiError, Response]): URIO[R, Response] =
    if req.path.encode != path then fallback(req)
    else
      run.foldCauseZIO(
        cause =>
          cause.failureOrCause match
            case Left(err @ ApiError.PayloadTooLarge(drained)) => ZIO.succeed(closeUnless(drained)(err.toResponse))
            case Left(err @ ApiError.UnsupportedMediaType) =>
              drain(req).map(drained => closeUnless(drained)(err.toResponse))
            case Left(err) => ZIO.succeed(err.toResponse)
            case Right(c) if c.isInterruptedOnly => ZIO.failCause(c)
            case Right(c) =>
              ZIO.logErrorCause("unexpected error on " + path, c).as(ApiError.ServerError.toResponse),
        ZIO.succeed(_)
      ).map(finish)

  private def closeUnless(drained: Boolean)(response: Response): Response =
    if drained then response else response.addHeader(Header.Connection.Close)

  /**
   * Set when shutdown begins. The listening socket is closed by then, but keep-alive connections could keep
   * sending requests and hold the in-flight count above zero until the 10 s limit; from now on every response
   * carries `Connection: close`, so each such connection ends after its current request.
   */
  private val draining = new java.util.concurrent.atomic.AtomicBoolean(false)

  val startDraining: UIO[Unit] = ZIO.succeed(draining.set(true))

  private def finish(response: Response): Response =
    if draining.get() && response.rawHeader("connection").isEmpty then response.addHeader(Header.Connection.Close) else response

  private def announcedLength(req: Request): Option[Long] =
    req.rawHeader("content-length").flatMap(_.trim.toLongOption)

  private def hasBody(req: Request): Boolean =
    announcedLength(req).exists(_ > 0) || req.rawHeader("transfer-encoding").isDefined

  /**
   * Reads the request body, failing with 413 once it exceeds 8192 bytes (announced or chunked). An oversized body
   * is still drained up to DrainCap so the answer reaches the client and the connection stays usable.
   */
  private def readBody(req: Request): IO[ApiError, Array[Byte]] =
    val max = TokenRequest.MaxBodyBytes
    if announcedLength(req).exists(_ > max) then drain(req).flatMap(d => ZIO.fail(ApiError.PayloadTooLarge(d)))
    else
      req.body.asStream.chunks
        .runFoldWhile((Chunk.empty[Byte], 0L))(_._2 <= DrainCap) { case ((acc, n), c) =>
          val total = n + c.length
          (if total <= max then acc ++ c else Chunk.empty, total)
        }
        .mapError(_ => ApiError.InvalidRequest("could not read the request body"))
        .flatMap { case (acc, n) =>
          if n > max then ZIO.fail(ApiError.PayloadTooLarge(n <= DrainCap)) else ZIO.succeed(acc.toArray)
        }

  /**
   * Discards whatever body remains (up to DrainCap, for at most DrainTimeout) so the connection can be reused; false
   * if we gave up, and the answer then closes the connection: a body that never completes must not hold the answer.
   */
  private def drain(req: Request): UIO[Boolean] =
    if !hasBody(req) then ZIO.succeed(true)
    else if announcedLength(req).exists(_ > DrainCap) then ZIO.succeed(false)
    else
      req.body.asStream.chunks
        .runFoldWhile(0L)(_ <= DrainCap)((n, c) => n + c.length)
        .map(_ <= DrainCap)
        .timeout(DrainTimeout)
        .map(_.getOrElse(false))
        .catchAll(_ => ZIO.succeed(false))
