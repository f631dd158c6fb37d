package simpleauth

import akka.actor.ClassicActorSystemProvider
import akka.http.scaladsl.model.*
import akka.http.scaladsl.model.headers.{`Cache-Control`, CacheDirectives, RawHeader}
import akka.http.scaladsl.server.*
import akka.http.scaladsl.server.Directives.*
import akka.util.ByteString
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicReference
import org.slf4j.LoggerFactory
import scala.concurrent.ExecutionContext
import scala.concurrent.duration.*
import scala.util.control.NonFatal
import simpleauth.JsonFormats.given

/**
 * The HTTP contract: POST /token (both grants), POST /revoke, GET /.well-known/jwks.json,
 * GET /.well-known/openid-configuration (both from the key set in service, see [[KeyRing]]), GET /health (readiness: the
 * database is asked), GET /health/live (liveness: never touches the database), and every error
 * in RFC 6749 JSON — akka-http's own rejections included: any other method on a known path is
 * 405 with its `Allow`, any method on an unknown path 404 (`/metrics` included: it is served on METRICS_PORT only,
 * [[metricsRoutes]], §3). The grants and the revocation themselves are [[TokenService]]'s; [[ClientAddress]] says
 * whose attempts a password grant counts (§8), from `X-Forwarded-For` only when the peer is one of `trustedProxies`.
 */
final class TokenRoutes(
    tokens: TokenService,
    health: DatabaseHealth,
    keys: KeyRing,
    metrics: Metrics,
    trustedProxies: TrustedProxies = TrustedProxies.None,
    outages: OutageLog = new OutageLog()
)(using system: ClassicActorSystemProvider) { // the materializer that reads request bodies
  import TokenRoutes.*

  private val log = LoggerFactory.getLogger(classOf[TokenRoutes])
  // The answers that never change, rendered once; those of the keys once per key set (the JWKS prints RSA moduli).
  private val keyAnswers = new AtomicReference[KeyAnswers](new KeyAnswers(keys.current))
  private val upResponse = HttpResponse(StatusCodes.OK, List(ApiError.NoStore), JsonFormats.entity(HealthStatus("up")))
  private val downResponse =
    HttpResponse(StatusCodes.ServiceUnavailable, List(ApiError.NoStore), JsonFormats.entity(HealthStatus("down")))

  /**
   * Every continuation of these routes (after the body, after a grant, the exception and rejection handlers, the
   * metering) is short non-blocking work, so it runs on the thread that finished what it waited for (`parasitic`: a
   * grant's database thread) instead of being queued for akka's default dispatcher once per directive; the answer
   * then goes back to the connection's stream, the one hand-off that cannot be saved.
   */
  lazy val routes: Route =
    withExecutionContext(ExecutionContext.parasitic) {
      publicRoutes
    }

  private def publicRoutes: Route =
    handleExceptions(exceptionHandler) {
      handleRejections(rejectionHandler) {
        concat(
          path("token") {
            post {
              metered {
                handleExceptions(exceptionHandler) {
                  handleRejections(rejectionHandler) {
                    token
                  }
                }
              }
            }
          },
          path("revoke") {
            post {
              revoke
            }
          },
          path(".well-known" / "jwks.json") {
            readOnly {
              complete(answersFor(keys.current).jwks)
            }
          },
          path(".well-known" / "openid-configuration") {
            readOnly {
              complete(answersFor(keys.current).discovery)
            }
          },
          path("health") {
            readOnly {
              onSuccess(health.isUp()) { up =>
                complete(if (up) upResponse else downResponse)
              }
            }
          },
          path("health" / "live") {
            readOnly { // liveness: the process serves requests; so it answers while PostgreSQL is down
              complete(upResponse)
            }
          }
        )
      }
    }

  /**
   * The METRICS_PORT listener's routes (§3): `GET /metrics`, the Prometheus text of [[Metrics]] (HEAD its status and
   * headers); every other method and path 404, so that nothing else is reachable there.
   */
  lazy val metricsRoutes: Route =
    handleExceptions(exceptionHandler) {
      handleRejections(RejectionHandler.newBuilder()
          .handleAll[Rejection](_ => completeError(ApiError.notFound))
          .handleNotFound(completeError(ApiError.notFound))
          .result()) {
        (path("metrics") & readOnly) {
          complete(HttpResponse(entity = HttpEntity(PrometheusText, metrics.scrape())))
        }
      }
    }

  /** The rendered JWKS and discovery answers of `keySet`: rendered again only after a reload swapped the keys. */
  private def answersFor(keySet: KeySet): KeyAnswers = {
    val rendered = keyAnswers.get()
    if (rendered.keySet eq keySet) rendered
    else {
      val fresh = new KeyAnswers(keySet)
      keyAnswers.set(fresh) // a race renders twice, harmlessly
      fresh
    }
  }

  /**
   * GET and HEAD only: any other method (custom ones included, see [[akka.http.impl.settings.AnyMethodParserSettings]]) is rejected
   * by both, and the rejection handler answers 405 with `Allow: GET, HEAD`. akka-http never sends a body in
   * the answer to a HEAD, so HEAD gets the GET answer's status and headers.
   */
  private val readOnly: Directive0 = get | head

  /**
   * Counts every answer to POST /token by status and OAuth error code (carried as a response attribute by
   * [[ApiError.response]]) and times it. The inner route handles its own rejections and exceptions,
   * so what is counted is the answer the client gets.
   */
  private def metered(inner: Route): Route = { ctx =>
    val start = System.nanoTime()
    inner(ctx).map { result =>
      result match {
        case RouteResult.Complete(response) =>
          metrics.tokenRequest(response.status.intValue, response.attribute(ApiError.Code).orNull, System.nanoTime() - start)
        case RouteResult.Rejected(_) => () // not reached: the inner route handles its rejections
      }
      result
    }(using ExecutionContext.parasitic)
  }

  private def token: Route =
    requestBody(
      body => JsonFormats.requestMembers(body).flatMap(TokenRequest.fromJson),
      body => TokenRequest.fromForm(body.toArrayUnsafe())
    ) { request =>
      extractRequest { http =>
        onSuccess(tokens.grant(request, clientAddress(http, trustedProxies))) {
          case Right(issued) => complete(StatusCodes.OK, List(ApiError.NoStore, PragmaNoCache), TokenResponse.from(issued))
          case Left(error)   => completeError(error)
        }
      }
    }

  /** RFC 7009: 200, empty, whatever the token was; only a database that cannot be asked changes the answer (503). */
  private def revoke: Route =
    requestBody(
      body => JsonFormats.requestMembers(body).flatMap(TokenRequest.revokeFromJson),
      body => TokenRequest.revokeFromForm(body.toArrayUnsafe())
    ) { request =>
      onSuccess(tokens.revoke(request.token)) {
        complete(RevokedResponse)
      }
    }

  /**
   * Reads the body with `fromJson` or `fromForm` for `inner`. Its Content-Type picks the reader (any other is
   * rejected: 415); more than [[TokenRoutes.MaxBodyBytes]], announced or sent, is 413; what the reader refuses is
   * answered with the reader's error.
   */
  private def requestBody[T](
      fromJson: ByteString => Either[RequestError, T],
      fromForm: ByteString => Either[RequestError, T]
  )(inner: T => Route): Route =
    extractRequestEntity { entity =>
      bodyReader(entity.contentType, fromJson, fromForm) match {
        case None => reject(UnsupportedRequestContentTypeRejection(Set(JsonType, FormType), Some(entity.contentType)))
        case Some(_) if entity.contentLengthOption.exists(_ > MaxBodyBytes) =>
          completeError(ApiError.payloadTooLarge)
        case Some(read) =>
          onSuccess(entity.withSizeLimit(MaxBodyBytes).toStrict(BodyReadTimeout)) { strict =>
            read(strict.data) match {
              case Left(error)  => completeError(ApiError.from(error))
              case Right(value) => inner(value)
            }
          }
      }
    }

  private def bodyReader[T](
      contentType: ContentType,
      fromJson: ByteString => Either[RequestError, T],
      fromForm: ByteString => Either[RequestError, T]
  ): Option[ByteString => Either[RequestError, T]] = {
    val mt = contentType.mediaType
    if (!mt.mainType.equalsIgnoreCase("application")) None
    else if (mt.subType.equalsIgnoreCase("json")) Some(fromJson)
    else if (mt.subType.equalsIgnoreCase("x-www-form-urlencoded")) Some(fromForm)
    else None
  }

  val rejectionHandler: RejectionHandler =
    RejectionHandler.newBuilder()
      .handleAll[MethodRejection] { rejections =>
        completeError(ApiError.methodNotAllowed(rejections.map(_.supported).distinct))
      }
      .handle { case _: UnsupportedRequestContentTypeRejection => completeError(ApiError.unsupportedMediaType) }
      .handle { case MalformedRequestContentRejection(_, _: EntityStreamSizeException) => completeError(ApiError.payloadTooLarge) }
      .handle { case _: MalformedRequestContentRejection => completeError(ApiError.invalidRequest("malformed request body")) }
      .handleNotFound { completeError(ApiError.notFound) }
      .handle { case _ => completeError(ApiError.invalidRequest("bad request")) }
      .result()

  val exceptionHandler: ExceptionHandler = ExceptionHandler {
    case _: EntityStreamSizeException => completeError(ApiError.payloadTooLarge)
    case e: EntityStreamException if e.info.summary.toLowerCase.contains("too large") => completeError(ApiError.payloadTooLarge)
    case _: EntityStreamException => completeError(ApiError.invalidRequest("request body could not be read"))
    case _: TimeoutException => completeError(ApiError.invalidRequest("request body not received in time"))
    case e: DatabaseUnavailable =>
      outages.report(e.getCause)
      completeError(ApiError.temporarilyUnavailable)
    case NonFatal(e) =>
      log.error("unexpected error answering a request", e)
      completeError(ApiError.serverError)
  }
}

object TokenRoutes {
  /** The answers a key set decides. */
  private final class KeyAnswers(val keySet: KeySet) {
    val jwks: HttpResponse = HttpResponse(StatusCodes.OK, List(PublicCache), JsonFormats.entity(keySet.jwks))
    val discovery: HttpResponse = HttpResponse(StatusCodes.OK, List(PublicCache), JsonFormats.entity(keySet.discovery))
  }

  val MaxBodyBytes: Long = TokenRequest.MaxBodyBytes

  /**
   * The client address of a request (contract §8, [[ClientAddress]]): the socket's peer (akka-http's
   * `remote-address-attribute`, switched on in `application.conf`) and the lines of `X-Forwarded-For`, read only when
   * the peer is a trusted proxy. A header akka-http models (`X-Forwarded-For`) renders its value again: its entries,
   * `unknown` among them.
   */
  def clientAddress(request: HttpRequest, trustedProxies: TrustedProxies): Option[java.net.InetAddress] =
    ClientAddress.resolve(
      request.attribute(AttributeKeys.remoteAddress).flatMap(_.toOption),
      request.headers.filter(_.is("x-forwarded-for")).map(_.value),
      trustedProxies
    )
  private val BodyReadTimeout = 10.seconds

  private val JsonType: ContentTypeRange = ContentTypeRange(MediaTypes.`application/json`)
  private val FormType: ContentTypeRange = ContentTypeRange(MediaTypes.`application/x-www-form-urlencoded`)

  /** Prometheus text exposition format 0.0.4. */
  private val PrometheusText: ContentType.WithCharset =
    MediaTypes.`text/plain`.withParams(Map("version" -> "0.0.4")).withCharset(HttpCharsets.`UTF-8`)
  private val PragmaNoCache: HttpHeader = RawHeader("Pragma", "no-cache")
  private val RevokedResponse: HttpResponse = HttpResponse(StatusCodes.OK, List(ApiError.NoStore), HttpEntity.Empty)
  private val PublicCache: HttpHeader = `Cache-Control`(CacheDirectives.public, CacheDirectives.`max-age`(300))

  def completeError(error: ApiError): StandardRoute = complete(error.response)
}
