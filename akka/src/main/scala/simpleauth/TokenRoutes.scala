package simpleauth

import akka.actor.ClassicActorSystemProvider
import akka.http.scaladsl.model.*
import akka.http.scaladsl.model.headers.{`Cache-Control`, CacheDirectives, RawHeader}
import akka.http.scaladsl.server.*
import akka.http.scaladsl.server.Directives.*
import akka.pattern.after
import akka.util.ByteString
import java.util.concurrent.{ConcurrentHashMap, TimeoutException}
import java.util.concurrent.atomic.AtomicLong
import org.slf4j.LoggerFactory
import scala.concurrent.{ExecutionContext, Future}
import scala.concurrent.duration.*
import scala.util.{Failure, Success}
import scala.util.control.NonFatal

/**
 * The HTTP contract: POST /token, GET /.well-known/jwks.json, GET /health (readiness: the
 * database is asked), GET /health/live (liveness: never touches the database), and every error
 * in RFC 6749 JSON — akka-http's own rejections included: any other method on a known path is
 * 405 with its `Allow`, any method on an unknown path 404. GET /metrics serves the Prometheus text
 * of [[Metrics]].
 *
 * @param hashingEc bounded dispatcher for password verification and signing
 *                  (CPU- and memory-heavy: kept off akka's default dispatcher)
 */
final class TokenRoutes(
    users: UserRepository,
    passwords: PasswordVerifier,
    signer: TokenSigner,
    metrics: Metrics,
    hashingEc: ExecutionContext
)(using system: ClassicActorSystemProvider) {
  import JsonFormats.{given, *}
  import TokenRoutes.*

  private val log = LoggerFactory.getLogger(classOf[TokenRoutes])
  private given ExecutionContext = system.classicSystem.dispatcher

  lazy val routes: Route =
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
          path(".well-known" / "jwks.json") {
            readOnly {
              complete(jwksResponse)
            }
          },
          path("health") {
            readOnly {
              health
            }
          },
          path("health" / "live") {
            readOnly {
              complete(liveResponse)
            }
          },
          path("metrics") {
            readOnly {
              complete(HttpResponse(entity = HttpEntity(PrometheusText, metrics.scrape())))
            }
          }
        )
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
   * [[TokenRoutes.errorResponse]]) and times it. The inner route handles its own rejections and exceptions,
   * so what is counted is the answer the client gets.
   */
  private def metered(inner: Route): Route = { ctx =>
    val start = System.nanoTime()
    inner(ctx).map { result =>
      result match {
        case RouteResult.Complete(response) =>
          metrics.tokenRequest(response.status.intValue, response.attribute(ErrorCode).orNull, System.nanoTime() - start)
        case RouteResult.Rejected(_) => () // not reached: the inner route handles its rejections
      }
      result
    }(using ExecutionContext.parasitic)
  }

  private def token: Route =
    extractRequestEntity { entity =>
      bodyReader(entity.contentType) match {
        case None => reject(UnsupportedRequestContentTypeRejection(Set(JsonType, FormType), Some(entity.contentType)))
        case Some(_) if entity.contentLengthOption.exists(_ > MaxBodyBytes) =>
          completeError(ApiError.payloadTooLarge)
        case Some(read) =>
          onSuccess(entity.withSizeLimit(MaxBodyBytes).toStrict(BodyReadTimeout)) { strict =>
            read(strict.data) match {
              case Left(error) => completeError(error)
              case Right(request) =>
                onSuccess(authenticate(request)) {
                  case Left(error) => completeError(error)
                  case Right(tokens) =>
                    complete(HttpResponse(
                      StatusCodes.OK,
                      headers = List(NoStore, PragmaNoCache),
                      entity = HttpEntity(ContentTypes.`application/json`, tokenPairWriter.write(tokens).compactPrint)
                    ))
                }
            }
          }
      }
    }

  private def bodyReader(contentType: ContentType): Option[ByteString => Either[ApiError, TokenRequest]] = {
    val mt = contentType.mediaType
    if (!mt.mainType.equalsIgnoreCase("application")) None
    else if (mt.subType.equalsIgnoreCase("json")) Some(TokenRequest.fromJson)
    else if (mt.subType.equalsIgnoreCase("x-www-form-urlencoded")) Some(TokenRequest.fromForm)
    else None
  }

  /**
   * Lookup (database dispatcher) -> verification and signing (hashing dispatcher). The step between them only
   * submits the next task, so it runs on the thread that finished the lookup (`parasitic`) instead of hopping to
   * the default dispatcher first: one thread hand-off per request less.
   */
  private def authenticate(request: TokenRequest): Future[Either[ApiError, TokenPair]] =
    users.findByEmail(request.username).flatMap {
      case None =>
        // No user enumeration: spend the same argon2id work as for a real user.
        Future { passwords.verifyDummy(request.password); Left(ApiError.invalidGrant) }(using hashingEc)
      case Some(user) =>
        Future {
          passwords.verify(request.password, user.passwordHash) match {
            case Verification.Valid => Right(signer.issue(user))
            case Verification.Invalid => Left(ApiError.invalidGrant)
            case Verification.Malformed(reason) =>
              reportBadHash(user, reason)
              Left(ApiError.invalidGrant)
          }
        }(using hashingEc)
    }(using ExecutionContext.parasitic)

  private def health: Route = {
    val probe = Future.firstCompletedOf(List(
      users.ping(),
      after(HealthTimeout)(Future.failed(new TimeoutException("health probe timed out")))
    ))
    onComplete(probe) {
      case Success(_) => complete(healthResponse(StatusCodes.OK, "up"))
      case Failure(_) => complete(healthResponse(StatusCodes.ServiceUnavailable, "down"))
    }
  }

  private def healthResponse(status: StatusCode, state: String): HttpResponse =
    HttpResponse(status, headers = List(NoStore),
      entity = HttpEntity(ContentTypes.`application/json`, healthWriter.write(HealthStatus(state)).compactPrint))

  /** Liveness: the process serves requests. Constant, so it answers while PostgreSQL is down. */
  private val liveResponse: HttpResponse = healthResponse(StatusCodes.OK, "up")

  private val jwksResponse: HttpResponse =
    HttpResponse(StatusCodes.OK,
      headers = List(`Cache-Control`(CacheDirectives.public, CacheDirectives.`max-age`(300))),
      entity = HttpEntity(ContentTypes.`application/json`, jwksWriter.write(signer.jwk).compactPrint))

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
      reportDatabaseDown(e.getCause)
      completeError(ApiError.temporarilyUnavailable)
    case NonFatal(e) =>
      log.error("unexpected error answering a request", e)
      completeError(ApiError.serverError)
  }

  // Errors are logged with their cause, but never once per request: a database
  // outage under load would otherwise flood the log.
  private val lastDbWarning = new AtomicLong(0L)
  private def reportDatabaseDown(cause: Throwable): Unit = {
    val now = System.nanoTime()
    val last = lastDbWarning.get()
    if ((last == 0L || now - last > DbWarningInterval.toNanos) && lastDbWarning.compareAndSet(last, now))
      log.warn(s"database unavailable, answering 503: ${cause.getClass.getName}: ${cause.getMessage}")
  }

  private val reportedBadHashes = ConcurrentHashMap.newKeySet[java.util.UUID]()
  private def reportBadHash(user: User, reason: String): Unit =
    if (reportedBadHashes.size < 10000 && reportedBadHashes.add(user.id))
      log.warn(s"data error: user ${user.id} has an unusable password hash ($reason); login refused")
}

object TokenRoutes {
  val MaxBodyBytes: Long = 8192
  private val BodyReadTimeout = 10.seconds
  private val HealthTimeout = 1.second
  private val DbWarningInterval = 10.seconds

  private val JsonType: ContentTypeRange = ContentTypeRange(MediaTypes.`application/json`)
  private val FormType: ContentTypeRange = ContentTypeRange(MediaTypes.`application/x-www-form-urlencoded`)

  val NoStore: HttpHeader = `Cache-Control`(CacheDirectives.`no-store`)

  /** The OAuth error code of an error answer, for the token request counter; not rendered. */
  val ErrorCode: AttributeKey[String] = AttributeKey[String]("simpleauth-error-code")

  /** Prometheus text exposition format 0.0.4. */
  private val PrometheusText: ContentType.WithCharset =
    MediaTypes.`text/plain`.withParams(Map("version" -> "0.0.4")).withCharset(HttpCharsets.`UTF-8`)
  private val PragmaNoCache: HttpHeader = RawHeader("Pragma", "no-cache")

  def errorResponse(error: ApiError): HttpResponse =
    HttpResponse(
      error.status,
      headers = NoStore :: error.headers,
      entity = HttpEntity(ContentTypes.`application/json`, JsonFormats.errorWriter.write(error).compactPrint)
    ).addAttribute(ErrorCode, error.error)

  def completeError(error: ApiError): StandardRoute = complete(errorResponse(error))
}
