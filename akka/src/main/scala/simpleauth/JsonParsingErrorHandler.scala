package simpleauth

import akka.event.LoggingAdapter
import akka.http.ParsingErrorHandler
import akka.http.scaladsl.model.{ErrorInfo, HttpResponse, StatusCode, StatusCodes}
import akka.http.scaladsl.settings.ServerSettings

/**
 * Requests that akka-http refuses before routing (bad request line, oversized
 * headers or URI, a Content-Length above max-content-length) get the same RFC 6749
 * JSON shape as everything else. Wired by `akka.http.server.parsing.error-handler`.
 */
object JsonParsingErrorHandler extends ParsingErrorHandler {
  override def handle(status: StatusCode, info: ErrorInfo, log: LoggingAdapter, settings: ServerSettings): HttpResponse = {
    val error =
      if (status == StatusCodes.ContentTooLarge) ApiError.payloadTooLarge
      // What the parser refuses (HTTP/9.9, a method that is no token, ...) is the client's
      // fault, not the server's: answer 400 rather than 501/505.
      else if (status.intValue >= 500) ApiError(StatusCodes.BadRequest, "invalid_request", Some(info.summary))
      else ApiError(status, "invalid_request", Some(info.summary))
    TokenRoutes.errorResponse(error)
  }
}
