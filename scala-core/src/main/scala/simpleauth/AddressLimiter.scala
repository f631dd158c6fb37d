package simpleauth

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.{AtomicLong, LongAdder}

/**
 * The per-client-address limit of password grants (contract §8), in memory and per instance, keyed by
 * [[ClientAddress.limitKey]]. Each password grant first reserves one attempt for its address in a fixed window of
 * `windowSeconds` from the window's first attempt, atomically: refused (the seconds left) when `maxFailures` are
 * already counted in the window, else counted. The grant gives its reservation back when it did not fail (a success, a
 * database outage, a locked username, contract §8 step C); what stays counted are the failures.
 *
 * The table is bounded: at most `capacity` addresses; when it is full, expired windows are swept, at most once a
 * second (so a flood of new addresses cannot make every grant walk the table), and an address that still finds no
 * room is not tracked (its reservations are neither refused nor counted).
 *
 * Times are nanoseconds (`System.nanoTime`, or `now` given by the caller: zio passes its `Clock.nanoTime`).
 */
final class AddressLimiter(
    maxFailures: Int,
    windowSeconds: Int,
    capacity: Int = AddressLimiter.Capacity,
    clock: () => Long = () => System.nanoTime()
) {
  import AddressLimiter.*

  private val windowNanos = windowSeconds.toLong * 1000000000L
  private val windows = new ConcurrentHashMap[String, Window]()
  private val lastSweep = new AtomicLong(NeverSwept)
  private val sweepCount = new LongAdder

  private def expired(w: Window, now: Long): Boolean = now - w.start >= windowNanos

  def reserve(key: String): Either[Long, Reservation] = reserve(key, clock())

  /** One attempt reserved for `key` at `now`: the reservation, or Left(the seconds until the window has passed, ≥ 1). */
  def reserve(key: String, now: Long): Either[Long, Reservation] = {
    if (windows.size >= capacity && !windows.containsKey(key)) sweep(now)
    if (windows.size >= capacity && !windows.containsKey(key)) Right(Untracked)
    else {
      var outcome: Either[Long, Reservation] = Right(Untracked)
      windows.compute(key, (_, w) =>
        if (w == null || expired(w, now)) {
          outcome = Right(Reserved(key, now))
          Window(now, 1)
        } else if (w.count >= maxFailures) {
          val left = w.start + windowNanos - now
          outcome = Left(math.max(1L, (left + 999999999L) / 1000000000L))
          w
        } else {
          outcome = Right(Reserved(key, w.start))
          Window(w.start, w.count + 1)
        })
      outcome
    }
  }

  /** Gives `reservation` back: one attempt fewer in its window, if that window is still the address's. */
  def release(reservation: Reservation): Unit = reservation match {
    case Reserved(key, start) =>
      windows.computeIfPresent(key, (_, w) =>
        if (w.start != start) w
        else if (w.count <= 1) null // nothing counted: the address leaves the table
        else Window(w.start, w.count - 1))
    case Untracked => ()
  }

  /** The attempts counted for `key` in its current window (0 when untracked or expired); for tests. */
  def count(key: String, now: Long = clock()): Int =
    Option(windows.get(key)).filterNot(expired(_, now)).fold(0)(_.count)

  /** Addresses tracked now (expired windows not yet swept included); for tests and sizing. */
  def size: Int = windows.size

  /** How many sweeps of the table have run; for tests. */
  def sweeps: Long = sweepCount.sum()

  private def sweep(now: Long): Unit = {
    val last = lastSweep.get()
    if ((last == NeverSwept || now - last >= SweepIntervalNanos) && lastSweep.compareAndSet(last, now)) {
      sweepCount.increment()
      windows.values.removeIf(w => expired(w, now))
    }
  }
}

object AddressLimiter {
  val Capacity = 100000
  val SweepIntervalNanos = 1000000000L
  private val NeverSwept = Long.MinValue

  /** What [[AddressLimiter.reserve]] counted, to give back with [[AddressLimiter.release]]. */
  sealed trait Reservation
  /** One attempt in the window of `key` that started at `windowStart`. */
  final case class Reserved(key: String, windowStart: Long) extends Reservation
  /** Nothing counted: no address, or the table was full. */
  case object Untracked extends Reservation

  /** One address's window: when its first attempt came, and how many are counted. Immutable, replaced on each change. */
  private final case class Window(start: Long, count: Int)
}
