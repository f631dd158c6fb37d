package simpleauth

import java.sql.SQLTransientConnectionException
import java.util.concurrent.atomic.{AtomicBoolean, AtomicInteger}

/**
 * Keeps every database call's answer within about the acquire timeout while the database is slow or gone.
 * The database dispatcher has one thread per pooled connection, so calls queue in front of it in an outage;
 * two rules keep them from each waiting out the full timeout in turn:
 *  - a call that already waited the acquire timeout for a thread fails at once;
 *  - once a call has failed with [[DatabaseUnavailable]], only one call at a time tries the database (a
 *    trial); the others fail at once, until a trial succeeds.
 *
 * @param clock nanoseconds, as `System.nanoTime`
 */
final class OutageGate(acquireTimeoutMs: Long, clock: () => Long = () => System.nanoTime()) {
  private val down = new AtomicBoolean(false)
  private val trialRunning = new AtomicBoolean(false)
  private val queued = new AtomicInteger(0)

  /** Calls submitted to the database dispatcher that have not started yet. */
  def waiting: Int = queued.get()

  /** Marks a call as submitted; its result is the `submitted` argument of [[run]]. */
  def enter(): Long = {
    queued.incrementAndGet()
    clock()
  }

  /**
   * On the database thread, runs `attempt` or fails with [[DatabaseUnavailable]] under the rules above.
   * `attempt` gets `trial = true` when it is the one call trying a database that was down; a
   * [[DatabaseUnavailable]] from it marks the database down (unless the pool was only busy,
   * `JdbcDatabase.isBusy`), any result marks it up.
   */
  def run[A](submitted: Long)(attempt: Boolean => A): A = {
    queued.decrementAndGet()
    if ((clock() - submitted) / 1000000L >= acquireTimeoutMs)
      throw new DatabaseUnavailable(new SQLTransientConnectionException("no database thread free within the acquire timeout"))
    val trial = down.get()
    if (trial && !trialRunning.compareAndSet(false, true))
      throw new DatabaseUnavailable(new SQLTransientConnectionException("database unreachable; a reconnection attempt is under way", "08001"))
    try {
      val result = attempt(trial)
      down.set(false)
      result
    } catch {
      case e: DatabaseUnavailable =>
        if (!JdbcDatabase.isBusy(e.getCause)) down.set(true) // a busy pool is overload: the database is up
        throw e
    } finally if (trial) trialRunning.set(false)
  }
}
