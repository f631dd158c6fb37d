package simpleauth

import java.net.InetAddress
import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}
import java.util.concurrent.atomic.AtomicLong
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import scala.concurrent.{Await, ExecutionContext}
import scala.concurrent.duration.*

class AddressLimiterSpec extends AnyWordSpec with Matchers {
  private val second = 1000000000L
  private def addr(i: Int) = InetAddress.getByAddress(Array[Byte](10, (i >> 16).toByte, (i >> 8).toByte, i.toByte))

  "AddressLimiter" should {
    "lock an address once its failures reach the limit within the window, and say for how long" in {
      val now = new AtomicLong(0)
      val limiter = new AddressLimiter(maxFailures = 3, windowSeconds = 60, clock = () => now.get())
      val a = addr(1)
      limiter.lockedFor(a) shouldBe None
      limiter.recordFailure(a)
      now.set(10 * second)
      limiter.recordFailure(a)
      limiter.lockedFor(a) shouldBe None
      now.set(20 * second + 1)
      limiter.recordFailure(a)
      limiter.lockedFor(a) shouldBe Some(40) // the window runs from the first failure: 39.999... s, rounded up
      limiter.lockedFor(addr(2)) shouldBe None
      now.set(59 * second + 999999999L)
      limiter.lockedFor(a) shouldBe Some(1) // at least 1
      now.set(60 * second)
      limiter.lockedFor(a) shouldBe None // the window has passed
    }

    "start a new window after the old one has passed" in {
      val now = new AtomicLong(0)
      val limiter = new AddressLimiter(maxFailures = 2, windowSeconds = 60, clock = () => now.get())
      val a = addr(1)
      limiter.recordFailure(a)
      now.set(61 * second)
      limiter.recordFailure(a) // the first failure of a new window
      limiter.lockedFor(a) shouldBe None
      limiter.recordFailure(a)
      limiter.lockedFor(a) shouldBe Some(60)
    }

    "track at most its capacity, sweeping expired windows when full, leaving the rest untracked" in {
      val now = new AtomicLong(0)
      val limiter = new AddressLimiter(maxFailures = 1, windowSeconds = 60, capacity = 3, clock = () => now.get())
      (1 to 3).foreach(i => limiter.recordFailure(addr(i)))
      limiter.size shouldBe 3
      limiter.recordFailure(addr(4)) // full, nothing expired: not tracked
      limiter.size shouldBe 3
      limiter.lockedFor(addr(4)) shouldBe None
      limiter.lockedFor(addr(1)) shouldBe Some(60)
      limiter.recordFailure(addr(1)) // a tracked address still counts
      now.set(61 * second)
      limiter.recordFailure(addr(5)) // full: the expired windows are swept, then it is tracked
      limiter.size shouldBe 1
      limiter.lockedFor(addr(5)) shouldBe Some(60)
    }

    "bound the sweeps of a full table to one a second" in {
      val now = new AtomicLong(0)
      val limiter = new AddressLimiter(maxFailures = 1, windowSeconds = 1, capacity = 2, clock = () => now.get())
      limiter.recordFailure(addr(1))
      limiter.recordFailure(addr(2))
      now.set(second / 2)
      limiter.recordFailure(addr(3)) // full: swept (nothing expired yet), not tracked
      now.set(second + 1)
      limiter.recordFailure(addr(4)) // expired now, but the last sweep was under a second ago
      limiter.lockedFor(addr(4)) shouldBe None
      now.set(second / 2 + second)
      limiter.recordFailure(addr(4))
      limiter.lockedFor(addr(4)) shouldBe Some(1)
    }

    "hold the default bound of 100,000 addresses" in {
      val limiter = new AddressLimiter(maxFailures = 1, windowSeconds = 300)
      (0 until 100010).foreach(i => limiter.recordFailure(addr(i)))
      limiter.size shouldBe 100000
    }
  }

  "PasswordCheckLimit" should {
    val pool = Executors.newFixedThreadPool(4)
    given ExecutionContext = ExecutionContext.fromExecutor(pool)

    "take a permit while a check waits or runs, refuse at once when none is free, and give it back" in {
      val limiter = new PasswordCheckLimit(2)
      val release = new CountDownLatch(1)
      val started = new CountDownLatch(2)
      val running = List.fill(2)(limiter.submit { started.countDown(); release.await(10, TimeUnit.SECONDS); "done" })
      running.forall(_.isDefined) shouldBe true
      started.await(10, TimeUnit.SECONDS) shouldBe true
      limiter.available shouldBe 0
      var ran = false
      limiter.submit { ran = true } shouldBe None
      release.countDown()
      running.flatten.foreach(f => Await.result(f, 10.seconds) shouldBe "done")
      eventually(limiter.available shouldBe 2)
      ran shouldBe false
    }

    "give the permit back when the check fails" in {
      val limiter = new PasswordCheckLimit(1)
      val failed = limiter.submit[String](throw new IllegalStateException("boom")).get
      an[IllegalStateException] should be thrownBy Await.result(failed, 10.seconds)
      eventually(limiter.available shouldBe 1)
    }

    "give the permit back when the executor refuses the check" in {
      val limiter = new PasswordCheckLimit(1)
      val refusing = ExecutionContext.fromExecutor(_ => throw new java.util.concurrent.RejectedExecutionException("shut down"))
      val outcome =
        try limiter.submit("x")(using refusing).map(f => scala.util.Try(Await.result(f, 10.seconds)))
        catch { case e: java.util.concurrent.RejectedExecutionException => Some(scala.util.Failure(e)) }
      outcome.exists(_.isFailure) shouldBe true
      eventually(limiter.available shouldBe 1)
    }
  }

  /** Polls `check` for up to 5 s: the permit is given back just after the future completes. */
  private def eventually(check: => Unit): Unit = {
    val deadline = System.nanoTime() + 5 * second
    var done = false
    while (!done) {
      try { check; done = true }
      catch { case e: org.scalatest.exceptions.TestFailedException if System.nanoTime() < deadline => Thread.sleep(5) }
    }
  }
}
