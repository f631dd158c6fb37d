package simpleauth

import akka.http.scaladsl.model.{AttributeKey, HttpHeader, HttpMethod, HttpResponse, StatusCode, StatusCodes}
import akka.http.scaladsl.model.headers.{`Cache-Control`, Allow, CacheDirectives, RawHeader}
import simpleauth.JsonFormats.given

/** An RFC 6749 §5.2 error answer: status, `error` code, optional description, extra headers. */
final case class ApiError(
    status: StatusCode,
    error: String,
    description: Option[String],
    headers: List[HttpHeader] = Nil
) {
  /**
   * The answer: this error's status and headers, `Cache-Control: no-store`, the JSON body, and the code as an
   * attribute for the token request counter. A finished response rather than a marshalled body, because
   * [[JsonParsingErrorHandler]] answers outside routing, where no marshaller runs. Rendered once per error.
   */
  lazy val response: HttpResponse =
    HttpResponse(status, ApiError.NoStore :: headers, JsonFormats.entity(ErrorBody.from(this)))
      .addAttribute(ApiError.Code, error)
}

object ApiError {
  val NoStore: HttpHeader = `Cache-Control`(CacheDirectives.`no-store`)

  /** The OAuth error code of an error answer, for the token request counter; not rendered. */
  val Code: AttributeKey[String] = AttributeKey[String]("simpleauth-error-code")

  def invalidRequest(description: String): ApiError =
    ApiError(StatusCodes.BadRequest, "invalid_request", Some(description))

  val unsupportedGrantType: ApiError =
    ApiError(StatusCodes.BadRequest, "unsupported_grant_type", Some("grant_type must be \"password\" or \"refresh_token\""))

  /** A request body the core's [[TokenRequest]] refused. */
  def from(error: RequestError): ApiError = error match {
    case RequestError.InvalidRequest(description) => invalidRequest(description)
    case RequestError.UnsupportedGrantType        => unsupportedGrantType
  }

  /** The same bytes for an unknown user, a wrong password and an unusable stored hash. */
  val invalidGrant: ApiError =
    ApiError(StatusCodes.BadRequest, "invalid_grant", Some("invalid username or password"))

  /** Every refused refresh (unknown, malformed, expired, used, revoked, another client's, a disabled user's): one answer. */
  val invalidRefreshToken: ApiError =
    ApiError(StatusCodes.BadRequest, "invalid_grant", Some("invalid refresh token"))

  /**
   * 429 of both login limits (§8), the same bytes for a locked username and a locked address; `retryAfterSeconds`
   * is the window's remaining time, at least 1.
   */
  def tooManyFailedLogins(retryAfterSeconds: Long): ApiError =
    ApiError(StatusCodes.TooManyRequests, "temporarily_unavailable", Some("too many failed logins; try again later"),
      List(RawHeader("Retry-After", math.max(1L, retryAfterSeconds).toString)))

  val payloadTooLarge: ApiError =
    ApiError(StatusCodes.ContentTooLarge, "invalid_request", Some("request body is larger than 8192 bytes"))

  val unsupportedMediaType: ApiError =
    ApiError(StatusCodes.UnsupportedMediaType, "invalid_request",
      Some("Content-Type must be application/json or application/x-www-form-urlencoded"))

  def methodNotAllowed(allowed: Seq[HttpMethod]): ApiError =
    ApiError(StatusCodes.MethodNotAllowed, "invalid_request", Some("method not allowed"), List(Allow(allowed.toList)))

  val notFound: ApiError = ApiError(StatusCodes.NotFound, "not_found", None)

  /** The database cannot be asked, and (the same answer) an argon2id check shed by the overload limit (§8). */
  val temporarilyUnavailable: ApiError =
    ApiError(StatusCodes.ServiceUnavailable, "temporarily_unavailable", Some("the user store is unavailable, retry later"),
      List(RawHeader("Retry-After", "1")))

  val serverError: ApiError = ApiError(StatusCodes.InternalServerError, "server_error", Some("internal error"))
}
