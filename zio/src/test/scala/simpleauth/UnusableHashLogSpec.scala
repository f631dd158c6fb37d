package simpleauth

import java.util.UUID

import zio.*
import zio.test.*

object UnusableHashLogSpec extends ZIOSpecDefault:
  def spec = suite("UnusableHashLog")(
    test("warns once per user, then at debug; remembers at most MaxReported users") {
      val (a, b) = (UUID.randomUUID(), UUID.randomUUID())
      def about(ids: Set[UUID])(log: Chunk[ZTestLogger.LogEntry]) = log.filter(e => ids.exists(id => e.message().contains(id.toString)))
      def at(level: LogLevel)(log: Chunk[ZTestLogger.LogEntry]) = log.count(_.logLevel == level)
      val others = List.fill(UnusableHashLog.MaxReported + 5)(UUID.randomUUID())
      for
        log   <- UnusableHashLog.make
        _     <- log.report(a, "unknown hash scheme").repeatN(2)
        _     <- log.report(b, "unknown hash scheme")
        first <- ZTestLogger.logOutput.map(about(Set(a, b)))
        _     <- ZIO.foreachDiscard(others)(log.report(_, "x"))
        rest  <- ZTestLogger.logOutput.map(about(others.toSet))
      yield assertTrue(
        at(LogLevel.Warning)(first) == 2,
        at(LogLevel.Debug)(first) == 2,
        at(LogLevel.Warning)(rest) == UnusableHashLog.MaxReported - 2,
        at(LogLevel.Debug)(rest) == 7
      )
    } @@ TestAspect.silentLogging, // ZTestLogger still records; no 10,000 lines on the console
    test("never logs the hash: the line names the user and the reason only") {
      val id = UUID.randomUUID()
      for
        log    <- UnusableHashLog.make
        _      <- log.report(id, "unknown hash scheme")
        output <- ZTestLogger.logOutput
      yield assertTrue(output.exists(e => e.message() == s"data error: user $id has an unusable password hash (unknown hash scheme); logins for this user are refused"))
    }
  )
