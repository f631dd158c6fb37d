package simpleauth

import java.sql.SQLException
import java.util.concurrent.atomic.{AtomicBoolean, AtomicLong}

import zio.*

/**
 * Database outages are logged on their transitions, never per request: one WARN when one starts, one INFO when it
 * ends, and at most one WARN per `minInterval`, so a pool that flaps under load cannot flood the log. (An outage
 * whose start was not logged has its end left unlogged too.) A call shed because every connection stayed busy for
 * the acquire timeout (`RenewablePool.isBusy`) is overload, not an outage: a WARN of its own, at most one per
 * `minInterval`, and no outage begins. `nanoTime` is the clock, for the tests.
 */
final class OutageLog(minInterval: Duration = 10.seconds, nanoTime: () => Long = () => java.lang.System.nanoTime()):
  private val down     = new AtomicBoolean(false)
  private val warned   = new AtomicBoolean(false)
  private val lastWarn = new AtomicLong(0L)
  private val lastBusy = new AtomicLong(0L)

  def failed(cause: Throwable): UIO[Unit] =
    ZIO.suspendSucceed {
      cause match
        case e: SQLException if RenewablePool.isBusy(e) => busy(e)
        case _ =>
          val now  = nanoTime()
          val last = lastWarn.get()
          if down.compareAndSet(false, true) && (last == 0L || now - last >= minInterval.toNanos) && lastWarn.compareAndSet(last, now) then
            warned.set(true)
            ZIO.logWarningCause("database unavailable; answering 503 until it is back", Cause.fail(cause))
          else ZIO.unit
    }

  private def busy(e: SQLException): UIO[Unit] =
    val now  = nanoTime()
    val last = lastBusy.get()
    if (last == 0L || now - last >= minInterval.toNanos) && lastBusy.compareAndSet(last, now) then
      ZIO.logWarning(s"database connections all busy, answering 503 to what waits longer than DB_ACQUIRE_TIMEOUT_MS (overload; the database is up): ${e.getMessage}")
    else ZIO.unit

  val recovered: UIO[Unit] =
    ZIO.suspendSucceed {
      if down.compareAndSet(true, false) && warned.getAndSet(false) then ZIO.logInfo("database available again")
      else ZIO.unit
    }
