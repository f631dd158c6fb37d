package simpleauth

import zio.*
import zio.http.*
import zio.json.*

/**
 * The HTTP surface: the public port's endpoints plus explicit 404/405 answers for every other method and path, and
 * the METRICS_PORT listener's `GET /metrics` (§3; the public port 404s `/metrics` like any unknown path). The login
 * itself is `TokenService`'s; here requests are parsed and answers written.
 */
final class Api(draining: Draining, trustedProxies: TrustedProxies = TrustedProxies.None):
  import Api.{*, given}
  import RequestBody.{closeUnless, drain, hasBody}

  /** A GET endpoint: GET and HEAD (the GET answer without its body) are routed; other methods reach `fallback`. */
  private def readOnly[R](pattern: Method => RoutePattern[Unit], path: String)(run: => URIO[R, Response]): List[Route[R, Nothing]] =
    List(Method.GET, Method.HEAD).map(m => Route.route(pattern(m))(handler((req: Request) => exactly(path, req)(run))))

  /**
   * Every request no route takes — an unknown path, a wrong method on a known one, any method zio-http has no route
   * for (custom tokens such as `FOO` or `QUERY` included) — is answered by `fallback` through `Routes.notFound`,
   * which zio-http calls for whatever its routing tree does not match. Routes with `Method.ANY` would not do: it
   * stands for the standard methods only, and a custom method left to zio-http got its own empty 404 (a QUERY
   * whose body came after that answer stalled the next request on the connection).
   */
  private val notFound: Handler[Any, Nothing, Request, Response] = Handler.fromFunctionZIO[Request](fallback)

  val routes: Routes[Env, Nothing] =
    val served = Routes.fromIterable(
      Route.route(Method.POST / "token")(handler((req: Request) => tokenEndpoint(req))) ::
        Route.route(Method.POST / "revoke")(handler((req: Request) => exactly("/revoke", req)(onJdbcThread(revoke(req))))) ::
        readOnly(_ / "health", "/health")(health) :::
        readOnly(_ / "health" / "live", "/health/live")(ZIO.succeed(healthUp)) :::
        readOnly(_ / ".well-known" / "jwks.json", "/.well-known/jwks.json")(jwks) :::
        readOnly(_ / ".well-known" / "openid-configuration", "/.well-known/openid-configuration")(discovery)
    )
    served.notFound = notFound
    served

  /**
   * Installs `routes` on the server. zio-http 3.11's server starts from `Routes.empty` and adds what is installed
   * with `++`, which keeps the left side's `notFound`; so ours is set there too, or requests with a method the
   * routing tree has no root for (`FOO`, `QUERY`) would get zio-http's own empty 404.
   */
  val install: URIO[Env & Server, Int] =
    ZIO.succeed(Routes.empty.notFound = notFound) *> Server.install(routes)

  /**
   * The METRICS_PORT listener's routes: `GET /metrics` (HEAD its status and headers), 404 for everything else. One
   * route per standard method over every path, so that no request there reaches the `notFound` handler, which zio-http
   * keeps once per process (on `Routes.empty`) and which is the public port's; a custom method token (`FOO`) still
   * does, and gets its 404 (or, on a public path, its 405).
   */
  val metricsRoutes: Routes[DatabaseHealth, Nothing] =
    Routes.fromIterable(
      List(Method.GET, Method.HEAD, Method.POST, Method.PUT, Method.DELETE, Method.PATCH, Method.OPTIONS, Method.TRACE, Method.CONNECT)
        .map(m => Route.route(m / trailing)(handler((_: Path, req: Request) => metricsPort(req))))
    )

  private def metricsPort(req: Request): URIO[DatabaseHealth, Response] =
    if req.path.encode == "/metrics" && (req.method == Method.GET || req.method == Method.HEAD) then metrics.map(finish(req))
    else drain(req).map(drained => finish(req)(closeUnless(drained)(ApiError.NotFound.toResponse)))

  /** Installs [[metricsRoutes]] on `server` (the METRICS_PORT one); its port. */
  def installMetrics(server: Server): URIO[DatabaseHealth, Int] = server.install(metricsRoutes) *> server.port

  // ---------------------------------------------------------------- endpoints

  /** `POST /token` counted and timed for the metrics (a `/token/` is the fallback's 404, not counted). */
  private def tokenEndpoint(req: Request): URIO[Env, Response] =
    if req.path.encode != "/token" then fallback(req)
    else exactly("/token", req, counted = true)(onJdbcThread(token(req))) @@ Metrics.tokenRequestDuration

  /**
   * Runs a `POST` endpoint's work, from reading its body to its answer, on `Database`'s executor: the server starts
   * each request on Netty's event loop (`Main.serverConfig`), and the grant that follows the body would lock itself to
   * that executor anyway (`TokenService`). Shifting before the body, not after it, is one hand-off from the event loop
   * to a JDBC thread instead of two (event loop → ZIO's default executor → JDBC thread); the body's bytes come by
   * callback, so a slow body waits as a suspended fiber, not on a thread.
   */
  private def onJdbcThread[R, E, A](work: ZIO[R, E, A]): ZIO[R & JdbcExecutor, E, A] =
    ZIO.serviceWithZIO[JdbcExecutor](jdbc => work.onExecutor(jdbc.executor))

  private def token(req: Request): ZIO[TokenService, ApiError, Response] =
    for
      kind    <- ZIO.fromOption(TokenRequest.kindOf(req.rawHeader("content-type"))).orElseFail(ApiError.UnsupportedMediaType)
      body    <- RequestBody.read(req)
      request <- ZIO.fromEither(RequestBody.tokenRequest(kind, body).left.map(ApiError.from))
      issued  <- TokenService.issue(request, clientAddress(req, trustedProxies).map(ClientAddress.limitKey))
    yield
      val pair = issued.pair
      Response(
        Status.Ok,
        Headers(
          Header.ContentType(MediaType.application.json),
          Header.CacheControl.NoStore,
          Header.Custom("Pragma", "no-cache")
        ),
        Body.fromArray(TokenResponse(pair.accessToken, pair.idToken, "Bearer", pair.expiresIn, issued.refreshToken).toJson.getBytes(utf8))
      )

  /** `POST /revoke` (RFC 7009): 200 with an empty body whatever the token was, so the answer tells nothing. */
  private def revoke(req: Request): ZIO[TokenService, ApiError, Response] =
    for
      kind    <- ZIO.fromOption(TokenRequest.kindOf(req.rawHeader("content-type"))).orElseFail(ApiError.UnsupportedMediaType)
      body    <- RequestBody.read(req)
      request <- ZIO.fromEither(RequestBody.revokeRequest(kind, body).left.map(ApiError.from))
      _       <- TokenService.revoke(request)
    yield revoked

  private val health: URIO[DatabaseHealth, Response] =
    ZIO.serviceWithZIO[DatabaseHealth](_.isUp).map(up => if up then healthUp else healthDown)

  /** The JWKS and the discovery document of the keys in service now (a reload swaps both at once). */
  private def published(document: KeySet => String): URIO[KeyRing, Response] =
    ZIO.serviceWithZIO[KeyRing](_.keys).map { keys =>
      Response(
        Status.Ok,
        Headers(Header.ContentType(MediaType.application.json), Header.Custom("Cache-Control", "public, max-age=300")),
        Body.fromArray(document(keys).getBytes(utf8))
      )
    }

  private val jwks: URIO[KeyRing, Response]      = published(_.jwks)
  private val discovery: URIO[KeyRing, Response] = published(_.discovery)

  private val metrics: URIO[DatabaseHealth, Response] =
    Metrics.scrape(ZIO.serviceWithZIO[DatabaseHealth](_.poolState)).map { text =>
      Response(
        Status.Ok,
        Headers(Header.Custom("Content-Type", Metrics.ContentType), Header.CacheControl.NoStore),
        Body.fromArray(text.getBytes(utf8))
      )
    }

  private def fallback(req: Request): UIO[Response] =
    val error = knownPaths.get(req.path.encode) match
      case Some(allowed) => ApiError.MethodNotAllowed(allowed)
      case None          => ApiError.NotFound
    drain(req).map(drained => finish(req)(closeUnless(drained)(error.toResponse)))

  // ---------------------------------------------------------------- plumbing

  /**
   * Routes match `/token/` like `/token`; the contract wants 404 for anything but the exact path. A body sent with a
   * GET or HEAD is drained like any other, so the connection stays usable.
   */
  private def exactly[R](path: String, req: Request, counted: Boolean = false)(run: ZIO[R, ApiError, Response]): URIO[R, Response] =
    def count(error: Option[ApiError]): UIO[Unit] = if counted then Metrics.tokenAnswered(error) else ZIO.unit
    if req.path.encode != path then fallback(req)
    else
      run.foldCauseZIO(
        cause =>
          cause.failureOrCause match
            case Left(err @ ApiError.PayloadTooLarge(drained)) => count(Some(err)).as(closeUnless(drained)(err.toResponse))
            case Left(err @ ApiError.UnsupportedMediaType) =>
              count(Some(err)) *> drain(req).map(drained => closeUnless(drained)(err.toResponse))
            case Left(err) => count(Some(err)).as(err.toResponse)
            case Right(c) if c.isInterruptedOnly => ZIO.failCause(c)
            case Right(c) =>
              count(Some(ApiError.ServerError)) *>
                ZIO.logErrorCause("unexpected error on " + path, c).as(ApiError.ServerError.toResponse),
        response =>
          if req.method == Method.POST then count(None).as(response)
          else if !hasBody(req) then ZIO.succeed(response)
          else drain(req).map(drained => closeUnless(drained)(response))
      ).map(finish(req))

  /**
   * The last step of every answer: `Connection: close` while draining, and for HEAD the same status and headers
   * without the body (its `Content-Length` stays that of the GET answer, as RFC 9110 §9.3.2 allows).
   */
  private def finish(req: Request)(response: Response): Response =
    val r = draining(response)
    if req.method != Method.HEAD then r
    else
      val withLength = r.body.knownContentLength match
        case Some(n) if r.rawHeader("content-length").isEmpty => r.addHeader(Header.ContentLength(n))
        case _                                                  => r
      withLength.copy(body = Body.empty)

object Api:
  type Env = TokenService & DatabaseHealth & KeyRing & JdbcExecutor

  /**
   * The client address of a request (contract §8, the core's `ClientAddress`): the socket's peer (zio-http's
   * `remoteAddress`, which never reads a forwarding header) and every `X-Forwarded-For` line in order, walked only
   * when the peer is one of the trusted proxies.
   */
  def clientAddress(req: Request, trustedProxies: TrustedProxies): Option[java.net.InetAddress] =
    val forwardedFor =
      if trustedProxies.isEmpty then Nil
      else req.headers.iterator.filter(_.headerName.equalsIgnoreCase("x-forwarded-for")).map(_.renderedValue).toList
    ClientAddress.resolve(req.remoteAddress, forwardedFor, trustedProxies)

  final case class TokenResponse(access_token: String, id_token: String, token_type: String, expires_in: Long, refresh_token: String)
  given JsonEncoder[TokenResponse] = DeriveJsonEncoder.gen[TokenResponse]

  /** Paths we serve and the `Allow` value of their 405. */
  private val AllowPost = "POST"
  private val AllowGet  = "GET, HEAD"
  private val knownPaths: Map[String, String] = Map(
    "/token"                 -> AllowPost,
    "/revoke"                -> AllowPost,
    "/health"                -> AllowGet,
    "/health/live"           -> AllowGet,
    "/.well-known/jwks.json" -> AllowGet,
    "/.well-known/openid-configuration" -> AllowGet
  )

  private val utf8 = java.nio.charset.StandardCharsets.UTF_8

  private val revoked = Response(Status.Ok, Headers(Header.CacheControl.NoStore), Body.empty)

  private val healthUp = Response(
    Status.Ok,
    Headers(Header.ContentType(MediaType.application.json), Header.CacheControl.NoStore),
    Body.fromArray("""{"status":"up"}""".getBytes(utf8))
  )
  /** `/health` is readiness (asks the database); `/health/live` is liveness and answers `healthUp` without it. */
  private val healthDown = healthUp.copy(status = Status.ServiceUnavailable, body = Body.fromArray("""{"status":"down"}""".getBytes(utf8)))
