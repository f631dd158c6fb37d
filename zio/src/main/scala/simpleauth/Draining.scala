package simpleauth

import java.util.concurrent.atomic.AtomicBoolean

import zio.*
import zio.http.{Body, Header, Response}

/**
 * Connection draining at shutdown. The listening socket is closed by then, but keep-alive connections could keep
 * sending requests and hold the in-flight count above zero until zio-http's 10 s limit; once `start` has run, every
 * response carries `Connection: close`, so each such connection ends after its current request.
 *
 * Once started, a response's bytes are also handed to zio-http as a stream of known length. zio-http counts a request
 * done when its response is handed to Netty, and a response held in memory (the usual, faster path) is only queued on
 * the connection's event loop by then; when the count reaches zero the event loops are shut down, and Netty closes
 * every connection before it runs the tasks still queued, so a queued answer could be lost ("connection closed
 * without response", seen once in CI). A streamed body is awaited until Netty has written it, so the count stays
 * above zero until the answer is on the wire. Only answers given while draining take this slower path.
 */
final class Draining:
  private val started = new AtomicBoolean(false)

  val start: UIO[Unit] = ZIO.succeed(started.set(true))

  def isStarted: Boolean = started.get()

  /** While draining: `Connection: close` unless the response already says what happens to the connection, and the
   * body written before the request counts as done. */
  def apply(response: Response): Response =
    if !started.get() then response
    else
      val closing = if response.rawHeader("connection").isEmpty then response.addHeader(Header.Connection.Close) else response
      closing.body.knownContentLength match
        case Some(length) if length > 0 && closing.body.isComplete =>
          val streamed = Body.fromStream(closing.body.asStream, length)
          closing.copy(body = closing.body.contentType.fold(streamed)(streamed.contentType(_)))
        case _ => closing
