package simpleauth

import java.util.concurrent.atomic.AtomicLong
import org.slf4j.{Logger, LoggerFactory}
import scala.concurrent.duration.*

/**
 * Logs a database outage at WARN with its cause at most once per `interval`, not once per request: under
 * load an outage fails thousands of requests a second.
 *
 * @param clock nanoseconds, as `System.nanoTime`
 */
final class OutageLog(
    interval: FiniteDuration = 10.seconds,
    log: Logger = LoggerFactory.getLogger(classOf[OutageLog]),
    clock: () => Long = () => System.nanoTime()
) {
  private val intervalNanos = interval.toNanos
  private val lastWarning = new AtomicLong(clock() - intervalNanos - 1) // the first report is logged

  /** Reports one request answered 503 because of `cause`; true when it was logged. */
  def report(cause: Throwable): Boolean = {
    val now = clock()
    val last = lastWarning.get()
    val due = now - last > intervalNanos && lastWarning.compareAndSet(last, now)
    if (due) log.warn(s"database unavailable, answering 503: ${cause.getClass.getName}: ${cause.getMessage}")
    due
  }
}
