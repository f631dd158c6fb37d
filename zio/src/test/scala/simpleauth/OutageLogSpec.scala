package simpleauth

import java.util.concurrent.atomic.AtomicLong

import zio.*
import zio.test.*

object OutageLogSpec extends ZIOSpecDefault:
  private val boom = new java.sql.SQLTransientConnectionException("connection refused", "08001", new java.net.ConnectException("refused"))
  /** HikariCP's timeout with every connection in use and no failed connection attempt behind it. */
  private val busy = new java.sql.SQLTransientConnectionException("simple-auth - Connection is not available, request timed out after 1000ms")

  /** An outage log on a clock the test moves (nanoseconds). */
  final case class Clocked(log: OutageLog, clock: AtomicLong)

  private val clocked = ZIO.succeed {
    val clock = new AtomicLong(1_000_000_000L)
    Clocked(OutageLog(10.seconds, () => clock.get()), clock)
  }

  /** The outage lines logged while `run` ran. */
  private def linesOf[R, E](run: ZIO[R, E, Any]): ZIO[R, E, Chunk[(LogLevel, String)]] =
    for
      before <- ZTestLogger.logOutput
      _      <- run
      after  <- ZTestLogger.logOutput
    yield after.drop(before.size).filter(_.message().startsWith("database")).map(e => (e.logLevel, e.message()))

  private val warning  = (LogLevel.Warning, "database unavailable; answering 503 until it is back")
  private val recovery = (LogLevel.Info, "database available again")

  def spec = suite("OutageLog")(
    test("an outage is one WARN however many requests fail, and its end one INFO") {
      for
        t     <- clocked
        lines <- linesOf(t.log.failed(boom).repeatN(99) *> t.log.recovered.repeatN(9))
      yield assertTrue(lines == Chunk(warning, recovery))
    },
    test("the WARN carries the cause") {
      for
        t      <- clocked
        before <- ZTestLogger.logOutput
        _      <- t.log.failed(boom)
        output <- ZTestLogger.logOutput.map(_.drop(before.size))
      yield assertTrue(output.exists(e => e.logLevel == LogLevel.Warning && e.cause.failureOption.contains(boom)))
    },
    test("a pool busy for the acquire timeout is overload: its own WARN, at most one per 10 s, and no outage begins") {
      for
        t      <- clocked
        first  <- linesOf(t.log.failed(busy).repeatN(99) *> t.log.recovered)
        _      <- ZIO.succeed(t.clock.addAndGet(10_000_000_000L))
        again  <- linesOf(t.log.failed(busy))
        outage <- linesOf(t.log.failed(boom))
      yield assertTrue(
        first.size == 1, first.head._1 == LogLevel.Warning, first.head._2.startsWith("database connections all busy"),
        first.head._2.contains("the database is up"), again.size == 1,
        outage == Chunk(warning) // a busy pool did not count as the outage's start
      )
    },
    test("a flapping database: at most one WARN per 10 s; an outage whose start was not logged ends silently") {
      for
        t     <- clocked
        first <- linesOf(t.log.failed(boom) *> t.log.recovered)
        _     <- ZIO.succeed(t.clock.addAndGet(5_000_000_000L))
        quiet <- linesOf(t.log.failed(boom) *> t.log.recovered)
        _     <- ZIO.succeed(t.clock.addAndGet(5_000_000_000L))
        again <- linesOf(t.log.failed(boom) *> t.log.recovered)
      yield assertTrue(first == Chunk(warning, recovery), quiet.isEmpty, again == Chunk(warning, recovery))
    }
  )
