package simpleauth

import zio.*
import zio.test.*

/** The per-address limit: a fixed window from the first failure, the lock at the limit, expiry, the table's bound. */
object AddressLimiterSpec extends ZIOSpecDefault:
  private val second = 1_000_000_000L

  def spec = suite("AddressLimiter")(
    test("locked once the failures reach the limit, with the window's seconds left, rounded up") {
      val l = AddressLimiter(maxFailures = 3, window = 300.seconds)
      l.recordFailure("a", 0)
      l.recordFailure("a", 10 * second)
      val beforeLimit = l.lockedFor("a", 10 * second)
      l.recordFailure("a", 20 * second)
      assertTrue(
        beforeLimit.isEmpty,
        l.lockedFor("a", 20 * second).contains(280L),         // the window started at the first failure
        l.lockedFor("a", 20 * second + 1).contains(280L),     // 279.999… rounds up
        l.lockedFor("a", 299 * second + 1).contains(1L),      // never below 1
        l.lockedFor("b", 20 * second).isEmpty                 // per address
      )
    },
    test("the lock ends with the window; the next failure starts a new window") {
      val l = AddressLimiter(maxFailures = 2, window = 60.seconds)
      l.recordFailure("a", 0)
      l.recordFailure("a", second)
      val locked = l.lockedFor("a", 59 * second)
      val after  = l.lockedFor("a", 60 * second)
      l.recordFailure("a", 61 * second)
      assertTrue(locked.contains(1L), after.isEmpty, l.lockedFor("a", 61 * second).isEmpty)
    },
    test("failures from before the window are not counted into a new one") {
      val l = AddressLimiter(maxFailures = 2, window = 60.seconds)
      l.recordFailure("a", 0)
      l.recordFailure("a", 70 * second) // a new window of one
      assertTrue(l.lockedFor("a", 71 * second).isEmpty)
    },
    test("bounded: when full, expired windows are swept; if none has expired, a new address is not tracked") {
      val l = AddressLimiter(maxFailures = 1, window = 60.seconds, capacity = 3)
      List("a", "b", "c").foreach(l.recordFailure(_, 0))
      l.recordFailure("d", 30 * second)                   // full, nothing expired: not tracked
      val untracked = l.lockedFor("d", 30 * second)
      l.recordFailure("a", 30 * second)                   // a tracked address still counts
      val sizeFull = l.size
      l.recordFailure("e", 61 * second)                   // full, all three expired: swept, then tracked
      assertTrue(
        untracked.isEmpty, sizeFull == 3,
        l.size == 1, l.lockedFor("e", 61 * second).contains(60L),
        l.lockedFor("a", 61 * second).isEmpty
      )
    },
    test("as effects, on ZIO's clock: no address, no limit") {
      val l = AddressLimiter(maxFailures = 1, window = 10.seconds)
      for
        _       <- l.failed(Some("x"))
        locked  <- l.check(Some("x"))
        _       <- TestClock.adjust(10.seconds)
        later   <- l.check(Some("x"))
        _       <- l.failed(None)
        nothing <- l.check(None)
      yield assertTrue(locked.contains(10L), later.isEmpty, nothing.isEmpty, l.size == 1)
    }
  )
