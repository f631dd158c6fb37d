package simpleauth

import java.util.concurrent.atomic.AtomicLong
import org.slf4j.{Logger, LoggerFactory}
import scala.concurrent.duration.*

/**
 * Logs a database outage at WARN with its cause at most once per `interval`, not once per request: under
 * load an outage fails thousands of requests a second. A call shed because every connection stayed busy for
 * the acquire timeout (`JdbcDatabase.isBusy`) is overload, not an outage: a WARN of its own, at most once per
 * `interval` as well.
 *
 * @param clock nanoseconds, as `System.nanoTime`
 */
final class OutageLog(
    interval: FiniteDuration = 10.seconds,
    log: Logger = LoggerFactory.getLogger(classOf[OutageLog]),
    clock: () => Long = () => System.nanoTime()
) {
  private val intervalNanos = interval.toNanos
  private val lastOutage = new AtomicLong(clock() - intervalNanos - 1) // the first report is logged
  private val lastBusy = new AtomicLong(clock() - intervalNanos - 1)

  /** Reports one request answered 503 because of `cause`; true when it was logged. */
  def report(cause: Throwable): Boolean = {
    val busy = JdbcDatabase.isBusy(cause)
    val last = if (busy) lastBusy else lastOutage
    val now = clock()
    val seen = last.get()
    val due = now - seen > intervalNanos && last.compareAndSet(seen, now)
    if (due && busy)
      log.warn(s"database connections all busy, answering 503 to what waits longer than DB_ACQUIRE_TIMEOUT_MS " +
        s"(overload; the database is up): ${cause.getMessage}")
    else if (due) log.warn(s"database unavailable, answering 503: ${cause.getClass.getName}: ${cause.getMessage}")
    due
  }
}
