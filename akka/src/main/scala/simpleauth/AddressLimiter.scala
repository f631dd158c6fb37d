package simpleauth

import java.net.InetAddress
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

/**
 * The per-client-address limit of failed logins (contract §8), in memory and per instance: each password-grant
 * `invalid_grant` counts one failure for the address, in a fixed window of `windowSeconds` from its first;
 * once the count reaches `maxFailures` the address is locked until the window has passed. A success does not
 * clear it. The table is bounded: at most `capacity` addresses; when it is full, expired windows are swept
 * (at most once a second, so a flood of new addresses cannot make every failure walk the table), and an
 * address that still finds no room is not tracked.
 *
 * @param clock nanoseconds, as `System.nanoTime`
 */
final class AddressLimiter(
    maxFailures: Int,
    windowSeconds: Int,
    capacity: Int = AddressLimiter.Capacity,
    clock: () => Long = () => System.nanoTime()
) {
  import AddressLimiter.*

  private val windowNanos = windowSeconds.toLong * 1000000000L
  private val windows = new ConcurrentHashMap[InetAddress, Window]()
  private val nextSweep = new AtomicLong(clock())

  /** The seconds until `address` may try again (rounded up, at least 1), or None when it is not locked. */
  def lockedFor(address: InetAddress): Option[Long] = {
    val window = windows.get(address)
    if (window == null) None
    else {
      val remaining = window.start + windowNanos - clock()
      if (remaining <= 0) { windows.remove(address, window); None }
      else if (window.failures < maxFailures) None
      else Some(math.max(1L, (remaining + 999999999L) / 1000000000L))
    }
  }

  /** Counts one failed login from `address`. */
  def recordFailure(address: InetAddress): Unit = {
    val now = clock()
    if (windows.size >= capacity && !windows.containsKey(address)) sweep(now)
    if (windows.size < capacity || windows.containsKey(address))
      windows.compute(address, (_, window) =>
        if (window == null || now - window.start >= windowNanos) new Window(now, 1)
        else new Window(window.start, window.failures + 1))
  }

  /** Addresses tracked now (expired windows not yet swept included); for tests and sizing. */
  def size: Int = windows.size

  private def sweep(now: Long): Unit = {
    val due = nextSweep.get()
    if (now - due >= 0 && nextSweep.compareAndSet(due, now + SweepIntervalNanos))
      windows.entrySet().removeIf(e => now - e.getValue.start >= windowNanos)
  }
}

object AddressLimiter {
  val Capacity = 100000
  private val SweepIntervalNanos = 1000000000L

  /** One address's window: when its first failure came, and how many since. Immutable, replaced on each failure. */
  private final class Window(val start: Long, val failures: Int)
}
