package simpleauth

import zio.http.*
import zio.json.*

/** Every way a request can fail, each mapped to exactly one response (contract §1 error table). */
enum ApiError:
  case InvalidRequest(description: String)
  case UnsupportedGrantType
  case InvalidGrant
  /** `drained`: the whole body was read, so the connection can be kept. */
  case PayloadTooLarge(drained: Boolean)
  case UnsupportedMediaType
  /** `allow`: the `Allow` header's value, `POST` or `GET, HEAD`. */
  case MethodNotAllowed(allow: String)
  case NotFound
  case TemporarilyUnavailable
  case ServerError

object ApiError:
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
  private val notFoundBytes     = """{"error":"not_found"}""".getBytes(java.nio.charset.StandardCharsets.UTF_8)
  private val unsupportedGrant  = body("unsupported_grant_type", "grant_type must be password")
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
      case PayloadTooLarge(_)     => json(Status.RequestEntityTooLarge, tooLarge)
      case UnsupportedMediaType   => json(Status.UnsupportedMediaType, mediaType)
      case MethodNotAllowed(allow) => json(Status.MethodNotAllowed, methodNotAllowed, Header.Custom("Allow", allow))
      case NotFound               => json(Status.NotFound, notFoundBytes)
      case TemporarilyUnavailable => json(Status.ServiceUnavailable, unavailable, Header.Custom("Retry-After", "1"))
      case ServerError            => json(Status.InternalServerError, serverError)
