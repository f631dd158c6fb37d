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
      val cause = new SQLTransientConnectionException("pool timeout")

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
