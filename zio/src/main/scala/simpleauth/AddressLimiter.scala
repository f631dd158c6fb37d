package simpleauth

import java.util.concurrent.ConcurrentHashMap

import zio.*

/**
 * The per-client-address login limit (contract §8), in memory and per instance. Each failed password grant counts
 * one failure for its address in a fixed window of `window` from the address's first failure; once the count
 * reaches `maxFailures`, password grants from the address are refused (429) until the window has passed. A success
 * does not clear it. At most `capacity` addresses are tracked: when the table is full, expired windows are swept;
 * an address beyond that is not tracked.
 *
 * A `ConcurrentHashMap` of immutable windows, each updated with one atomic `compute`; times are `Clock.nanoTime`
 * (monotonic, and `TestClock` in the specs).
 */
final class AddressLimiter(maxFailures: Int, window: Duration, capacity: Int = AddressLimiter.Capacity):
  import AddressLimiter.Window

  private val windowNanos = window.toNanos
  private val windows     = new ConcurrentHashMap[String, Window]()

  private def expired(w: Window, now: Long): Boolean = now - w.start >= windowNanos

  /** The seconds the address's lock has left (rounded up, at least 1), if it is locked. */
  def lockedFor(address: String, now: Long): Option[Long] =
    Option(windows.get(address)).filter(w => w.failures >= maxFailures && !expired(w, now)).map { w =>
      val left = w.start + windowNanos - now
      math.max(1L, (left + 999_999_999L) / 1_000_000_000L)
    }

  /** One failure for the address: a new window if it has none or its window has passed. */
  def recordFailure(address: String, now: Long): Unit =
    if !windows.containsKey(address) && windows.size >= capacity then sweep(now)
    if windows.containsKey(address) || windows.size < capacity then
      windows.compute(address, (_, w) => if w == null || expired(w, now) then Window(now, 1) else w.copy(failures = w.failures + 1))

  private def sweep(now: Long): Unit =
    windows.values.removeIf(w => expired(w, now))

  /** Addresses tracked now (for tests). */
  def size: Int = windows.size

  // ---------------------------------------------------------------- as effects, for the request path

  def check(address: Option[String]): UIO[Option[Long]] =
    address.fold(ZIO.none)(a => Clock.nanoTime.map(lockedFor(a, _)))

  def failed(address: Option[String]): UIO[Unit] =
    ZIO.foreachDiscard(address)(a => Clock.nanoTime.map(recordFailure(a, _)))

object AddressLimiter:
  val Capacity = 100_000

  private final case class Window(start: Long, failures: Int)

  val live: URLayer[Settings, AddressLimiter] = ZLayer.fromFunction((cfg: Settings) =>
    AddressLimiter(cfg.limits.loginIpMaxFailures, cfg.limits.loginFailureWindowSeconds.seconds)
  )
