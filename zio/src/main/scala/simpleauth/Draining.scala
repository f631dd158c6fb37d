package simpleauth

import java.util.concurrent.atomic.AtomicBoolean

import zio.*
import zio.http.{Header, Response}

/**
 * Connection draining at shutdown. The listening socket is closed by then, but keep-alive connections could keep
 * sending requests and hold the in-flight count above zero until zio-http's 10 s limit; once `start` has run, every
 * response carries `Connection: close`, so each such connection ends after its current request.
 */
final class Draining:
  private val started = new AtomicBoolean(false)

  val start: UIO[Unit] = ZIO.succeed(started.set(true))

  def isStarted: Boolean = started.get()

  /** `Connection: close` while draining, unless the response already says what happens to the connection. */
  def apply(response: Response): Response =
    if started.get() && response.rawHeader("connection").isEmpty then response.addHeader(Header.Connection.Close) else response
