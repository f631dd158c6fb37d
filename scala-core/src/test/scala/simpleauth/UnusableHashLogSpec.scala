package simpleauth

import ch.qos.logback.classic.Level
import java.util.UUID
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class UnusableHashLogSpec extends AnyWordSpec with Matchers {
  private val Hash = "$disabled$2026-11-23T17:00:00Z"
  private def user() = User(UUID.randomUUID(), "u", "U", "u@example.com", Hash)

  "UnusableHashLog" should {
    "log a user at WARN once, later logins of that user at DEBUG, never the hash" in {
      val capture = new LogCapture("unusable-once")
      val log = new UnusableHashLog(log = capture.logger)
      val (a, b) = (user(), user())
      log.report(a, "unknown hash scheme") shouldBe true
      log.report(a, "unknown hash scheme") shouldBe false
      log.report(b, "unknown hash scheme") shouldBe true
      log.report(a, "unknown hash scheme") shouldBe false
      capture.events.map(_._1) shouldBe List(Level.WARN, Level.DEBUG, Level.WARN, Level.DEBUG)
      capture.events.map(_._2).take(3).zip(List(a, a, b)).foreach { case (message, u) => message should include(u.id.toString) }
      capture.events.foreach { case (_, message) => message should not include Hash }
    }

    "stop remembering after its capacity: users beyond it go to DEBUG only" in {
      val capture = new LogCapture("unusable-capacity")
      val log = new UnusableHashLog(capacity = 3, log = capture.logger)
      val remembered = List.fill(3)(user())
      remembered.map(log.report(_, "r")) shouldBe List(true, true, true)
      val late = user()
      log.report(late, "r") shouldBe false
      log.report(late, "r") shouldBe false
      remembered.map(log.report(_, "r")) shouldBe List(false, false, false)
      capture.events.map(_._1) shouldBe List.fill(3)(Level.WARN) ++ List.fill(5)(Level.DEBUG)
    }

    "remember 10,000 users by default" in {
      UnusableHashLog.Capacity shouldBe 10000
    }
  }
}
