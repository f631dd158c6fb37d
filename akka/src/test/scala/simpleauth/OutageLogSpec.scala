package simpleauth

import ch.qos.logback.classic.Level
import java.sql.SQLTransientConnectionException
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import scala.concurrent.duration.*

class OutageLogSpec extends AnyWordSpec with Matchers {
  "OutageLog" should {
    "log the first failure with its cause, then at most once per interval" in {
      val capture = new LogCapture("outage")
      var now = 5.seconds.toNanos
      val log = new OutageLog(10.seconds, capture.logger, () => now)
      val cause = new SQLTransientConnectionException("pool timeout", "08001", new java.net.ConnectException("refused"))

      log.report(cause) shouldBe true
      now += 1.second.toNanos
      log.report(cause) shouldBe false
      now += 9.seconds.toNanos // exactly the interval after the first
      log.report(cause) shouldBe false
      now += 1.milli.toNanos
      log.report(cause) shouldBe true
      log.report(cause) shouldBe false

      capture.events.map(_._1) shouldBe List(Level.WARN, Level.WARN)
      capture.events.head._2 should include("java.sql.SQLTransientConnectionException: pool timeout")
    }

    "log a busy pool as overload, not as an outage, each at most once per interval" in {
      val capture = new LogCapture("outage-busy")
      var now = 5.seconds.toNanos
      val log = new OutageLog(10.seconds, capture.logger, () => now)
      // HikariCP's timeout with every connection in use and no failed connection attempt behind it
      val busy = new SQLTransientConnectionException("Connection is not available, request timed out after 1000ms")
      val down = new SQLTransientConnectionException("Connection is not available", "08001", new java.net.ConnectException("refused"))

      log.report(busy) shouldBe true
      log.report(busy) shouldBe false
      log.report(down) shouldBe true // a busy pool's line does not hold back an outage's
      now += 11.seconds.toNanos
      log.report(busy) shouldBe true

      capture.events.map(_._2.takeWhile(_ != ',')) shouldBe
        List("database connections all busy", "database unavailable", "database connections all busy")
      capture.events.head._2 should include("the database is up")
    }

    "log only one of many concurrent failures" in {
      val capture = new LogCapture("outage-concurrent")
      val log = new OutageLog(1.hour, capture.logger)
      val logged = (1 to 64).concurrently(log.report(new RuntimeException("down")))
      logged.count(identity) shouldBe 1
      capture.events.size shouldBe 1
    }
  }

  extension (range: Range)
    /** Runs `body` once per element on threads of their own, all started together. */
    private def concurrently(body: => Boolean): List[Boolean] = {
      val start = new java.util.concurrent.CountDownLatch(1)
      val results = new java.util.concurrent.ConcurrentLinkedQueue[Boolean]()
      val threads = range.map(_ => new Thread(() => { start.await(); results.add(body); () }))
      threads.foreach(_.start())
      start.countDown()
      threads.foreach(_.join())
      results.toArray.toList.map(_.asInstanceOf[Boolean])
    }
}
