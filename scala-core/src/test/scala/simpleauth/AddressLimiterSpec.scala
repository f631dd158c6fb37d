package simpleauth

import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}
import java.util.concurrent.atomic.AtomicLong
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class AddressLimiterSpec extends AnyWordSpec with Matchers {
  private val second = 1000000000L
  private def addr(i: Int) = s"10.0.${i / 256}.${i % 256}"

  "AddressLimiter" should {
    "reserve attempts up to the limit within the window, then refuse with the seconds left" in {
      val now = new AtomicLong(0)
      val limiter = new AddressLimiter(maxFailures = 3, windowSeconds = 60, clock = () => now.get())
      val a = addr(1)
      limiter.reserve(a).isRight shouldBe true
      now.set(10 * second)
      limiter.reserve(a).isRight shouldBe true
      now.set(20 * second + 1)
      limiter.reserve(a).isRight shouldBe true
      limiter.count(a) shouldBe 3
      limiter.reserve(a) shouldBe Left(40) // the window runs from its first attempt: 39.999... s, rounded up
      limiter.count(a) shouldBe 3 // a refusal reserves nothing
      limiter.reserve(addr(2)).isRight shouldBe true
      now.set(59 * second + 999999999L)
      limiter.reserve(a) shouldBe Left(1) // at least 1
      now.set(60 * second)
      limiter.reserve(a).isRight shouldBe true // the window has passed: a new one
      limiter.count(a) shouldBe 1
    }

    "give a reservation back, in its own window only" in {
      val now = new AtomicLong(0)
      val limiter = new AddressLimiter(maxFailures = 2, windowSeconds = 60, clock = () => now.get())
      val a = addr(1)
      val first = limiter.reserve(a).toOption.get
      val second = limiter.reserve(a).toOption.get
      limiter.reserve(a).isLeft shouldBe true
      limiter.release(second)
      limiter.count(a) shouldBe 1
      limiter.reserve(a).isRight shouldBe true // the slot given back
      limiter.release(first)
      limiter.count(a) shouldBe 1
      now.set(61 * this.second)
      val fresh = limiter.reserve(a).toOption.get // a new window
      limiter.release(second) // of the old window: nothing changes
      limiter.count(a) shouldBe 1
      limiter.release(fresh)
      limiter.count(a) shouldBe 0
      limiter.size shouldBe 0 // nothing counted: the address left the table
    }

    "hold the limit under concurrent reservations: exactly the limit admitted" in {
      val limiter = new AddressLimiter(maxFailures = 50, windowSeconds = 60)
      val pool = Executors.newFixedThreadPool(8)
      val start = new CountDownLatch(1)
      val admitted = new java.util.concurrent.atomic.AtomicInteger
      try {
        for (_ <- 1 to 400) pool.execute { () => start.await(); if (limiter.reserve("10.0.0.1").isRight) admitted.incrementAndGet() }
        start.countDown()
        pool.shutdown()
        pool.awaitTermination(30, TimeUnit.SECONDS) shouldBe true
      } finally pool.shutdownNow()
      admitted.get shouldBe 50
      limiter.count("10.0.0.1") shouldBe 50
    }

    "track at most its capacity, sweeping expired windows when full, leaving the rest untracked" in {
      val now = new AtomicLong(0)
      val limiter = new AddressLimiter(maxFailures = 1, windowSeconds = 60, capacity = 3, clock = () => now.get())
      (1 to 3).foreach(i => limiter.reserve(addr(i)).isRight shouldBe true)
      limiter.size shouldBe 3
      limiter.reserve(addr(4)) shouldBe Right(AddressLimiter.Untracked) // full, nothing expired: not tracked, not refused
      limiter.reserve(addr(4)) shouldBe Right(AddressLimiter.Untracked)
      limiter.size shouldBe 3
      limiter.reserve(addr(1)) shouldBe Left(60) // a tracked address still counts
      limiter.release(AddressLimiter.Untracked) // harmless
      now.set(61 * second)
      limiter.reserve(addr(5)).isRight shouldBe true // full: the expired windows are swept, then it is tracked
      limiter.size shouldBe 1
      limiter.reserve(addr(5)) shouldBe Left(60)
    }

    "sweep at most once a second, however many new addresses arrive" in {
      val now = new AtomicLong(0)
      val limiter = new AddressLimiter(maxFailures = 5, windowSeconds = 1, capacity = 1, clock = () => now.get())
      limiter.reserve(addr(1)).isRight shouldBe true // t=0: the table is full
      now.set(second / 2)
      for (i <- 2 to 1000) limiter.reserve(addr(i)) shouldBe Right(AddressLimiter.Untracked) // full, nothing expired
      limiter.sweeps shouldBe 1 // one sweep, not one per new address
      now.set(second + second / 5) // addr(1) has expired, but the last sweep was 0.7 s ago
      limiter.reserve(addr(2)) shouldBe Right(AddressLimiter.Untracked)
      limiter.sweeps shouldBe 1
      limiter.size shouldBe 1
      now.set(second + second / 2) // a second after the last sweep
      limiter.reserve(addr(2)).isRight shouldBe true
      limiter.sweeps shouldBe 2
      limiter.count(addr(2)) shouldBe 1
      limiter.count(addr(1)) shouldBe 0
    }

    "take the caller's time when it gives one" in {
      val limiter = new AddressLimiter(maxFailures = 1, windowSeconds = 10, clock = () => fail("the clock is not asked"))
      limiter.reserve("a", 5 * second).isRight shouldBe true
      limiter.reserve("a", 6 * second) shouldBe Left(9)
      limiter.reserve("a", 15 * second).isRight shouldBe true
    }
  }
}
