package simpleauth

import akka.event.LoggingAdapter
import akka.http.ParsingErrorHandler
import akka.http.scaladsl.model.{ContentTypes, ErrorInfo, HttpEntity, HttpMethods, HttpResponse, StatusCode, StatusCodes}
import akka.http.scaladsl.settings.ServerSettings
import akka.stream.scaladsl.Source

/**
 * Requests that akka-http refuses before routing (bad request line, oversized
 * headers or URI, a Content-Length above max-content-length, content on HEAD or
 * TRACE) get the same RFC 6749 JSON shape as everything else. Wired by
 * `akka.http.server.parsing.error-handler`. akka-http closes the connection after
 * every answer given here (and says so with `Connection: close`).
 */
object JsonParsingErrorHandler extends ParsingErrorHandler {

  /**
   * akka-http's request parser refuses content (a Content-Length above 0, or chunked) on the
   * methods whose entity it disallows — HEAD and TRACE — with 422 "<METHOD> requests must not
   * have an entity", before routing. The contract's one alternative answer for exactly that
   * case (spec/README.md, "Methods"; RFC 9110 §9.3.2 and §9.3.8): 400 invalid_request, the
   * connection closed.
   */
  private val ContentNotAllowed = """(\S+) requests must not have an entity""".r

  override def handle(status: StatusCode, info: ErrorInfo, log: LoggingAdapter, settings: ServerSettings): HttpResponse =
    info.summary match {
      case ContentNotAllowed(method) if status == StatusCodes.UnprocessableContent =>
        val answer =
          ApiError.invalidRequest(s"a $method request must not carry content (RFC 9110, sections 9.3.2 and 9.3.8)").response
        // akka renders a parsing error's answer as if for GET, so HEAD's "no body" is this handler's job:
        // a close-delimited entity keeps Content-Type, claims no Content-Length and sends no bytes.
        if (method == HttpMethods.HEAD.value) answer.withEntity(HttpEntity.CloseDelimited(ContentTypes.`application/json`, Source.empty))
        else answer
      case _ =>
        val error =
          if (status == StatusCodes.ContentTooLarge) ApiError.payloadTooLarge
          // What the parser refuses (HTTP/9.9, a method that is no token, ...) is the client's
          // fault, not the server's: answer 400 rather than 501/505.
          else if (status.intValue >= 500) ApiError(StatusCodes.BadRequest, "invalid_request", Some(info.summary))
          else ApiError(status, "invalid_request", Some(info.summary))
        error.response
    }
}
