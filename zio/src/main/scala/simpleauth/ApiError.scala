package simpleauth

import zio.http.*
import zio.json.*

/** Every way a request can fail, each mapped to exactly one response (contract §1 error table). */
enum ApiError:
  case InvalidRequest(description: String)
  case UnsupportedGrantType
  /** A password grant refused: unknown user, wrong password, unusable stored hash — the same bytes for each. */
  case InvalidGrant
  /** A refresh grant refused (§7): unknown, malformed, expired, used, revoked, another client's, a disabled user's. */
  case InvalidRefreshToken
  /** Too many failed logins for the username or from the client address (§8): 429 with `Retry-After`. */
  case TooManyFailedLogins(retryAfterSeconds: Long)
  /** `drained`: the whole body was read, so the connection can be kept. */
  case PayloadTooLarge(drained: Boolean)
  case UnsupportedMediaType
  /** `allow`: the `Allow` header's value, `POST` or `GET, HEAD`. */
  case MethodNotAllowed(allow: String)
  case NotFound
  /** The database cannot be asked, or a password check was shed (§8): 503 with `Retry-After: 1`. */
  case TemporarilyUnavailable
  case ServerError

object ApiError:
  /** A request body the core's `TokenRequest` refused. */
  def from(error: RequestError): ApiError = error match
    case RequestError.InvalidRequest(description) => InvalidRequest(description)
    case RequestError.UnsupportedGrantType        => UnsupportedGrantType

  final case class Body(error: String, error_description: String)
  given JsonEncoder[Body] = DeriveJsonEncoder.gen[Body]

  private val jsonHeaders = Headers(
    Header.ContentType(MediaType.application.json),
    Header.CacheControl.NoStore
  )

  private def json(status: Status, bytes: Array[Byte], extra: Header*): Response =
    Response(status, jsonHeaders ++ Headers(extra*), zio.http.Body.fromArray(bytes))

  private def body(error: String, description: String): Array[Byte] =
    Body(error, description).toJson.getBytes(java.nio.charset.StandardCharsets.UTF_8)

  // Fixed bodies are rendered once.
  private val invalidGrantBytes = body("invalid_grant", "invalid username or password")
  private val invalidRefresh    = body("invalid_grant", "invalid refresh token")
  private val tooManyFailures   = body("temporarily_unavailable", "too many failed logins; try again later")
  private val notFoundBytes     = """{"error":"not_found"}""".getBytes(java.nio.charset.StandardCharsets.UTF_8)
  private val unsupportedGrant  = body("unsupported_grant_type", "grant_type must be password or refresh_token")
  private val tooLarge          = body("invalid_request", "request body larger than 8192 bytes")
  private val mediaType         = body("invalid_request", "Content-Type must be application/json or application/x-www-form-urlencoded")
  private val methodNotAllowed  = body("invalid_request", "method not allowed")
  private val unavailable       = body("temporarily_unavailable", "the user database is unavailable, retry later")
  private val serverError       = body("server_error", "unexpected error")

  extension (e: ApiError)
    def toResponse: Response = e match
      case InvalidRequest(d)      => json(Status.BadRequest, body("invalid_request", d))
      case UnsupportedGrantType   => json(Status.BadRequest, unsupportedGrant)
      case InvalidGrant           => json(Status.BadRequest, invalidGrantBytes)
      case InvalidRefreshToken    => json(Status.BadRequest, invalidRefresh)
      case TooManyFailedLogins(s) => json(Status.TooManyRequests, tooManyFailures, Header.Custom("Retry-After", math.max(1L, s).toString))
      case PayloadTooLarge(_)     => json(Status.RequestEntityTooLarge, tooLarge)
      case UnsupportedMediaType   => json(Status.UnsupportedMediaType, mediaType)
      case MethodNotAllowed(allow) => json(Status.MethodNotAllowed, methodNotAllowed, Header.Custom("Allow", allow))
      case NotFound               => json(Status.NotFound, notFoundBytes)
      case TemporarilyUnavailable => json(Status.ServiceUnavailable, unavailable, Header.Custom("Retry-After", "1"))
      case ServerError            => json(Status.InternalServerError, serverError)
