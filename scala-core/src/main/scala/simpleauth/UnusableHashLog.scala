package simpleauth

import java.util.UUID
import java.util.concurrent.ConcurrentHashMap
import org.slf4j.{Logger, LoggerFactory}

/**
 * Logs an unusable stored hash (a disabled user, an unknown scheme) at WARN once per user and every later
 * login of that user at DEBUG, so a client retrying such an account cannot flood the log: a data problem to fix, not
 * a per-login event. Remembers at most
 * `capacity` users, a bound on memory; users beyond it are logged at DEBUG only. Never logs the hash.
 */
final class UnusableHashLog(
    capacity: Int = UnusableHashLog.Capacity,
    log: Logger = LoggerFactory.getLogger(classOf[UnusableHashLog])
) {
  private val warned = ConcurrentHashMap.newKeySet[UUID]()

  /** Logs one refused login of `user` through SLF4J; true when it was logged at WARN. */
  def report(user: User, reason: String): Boolean = {
    val first = firstReport(user)
    if (first) log.warn(UnusableHashLog.warning(user, reason))
    else if (log.isDebugEnabled) log.debug(UnusableHashLog.detail(user, reason))
    first
  }

  /**
   * Remembers one refused login of `user` without logging it: true when it is the first (to log at WARN, with
   * [[UnusableHashLog.warning]]), false for a later one (DEBUG, [[UnusableHashLog.detail]]). For a stack that logs
   * with its own logger.
   */
  def firstReport(user: User): Boolean = warned.size < capacity && warned.add(user.id)
}

object UnusableHashLog {
  val Capacity = 10000

  def warning(user: User, reason: String): String = s"data error: user ${user.id} has an unusable password hash ($reason); login refused"

  def detail(user: User, reason: String): String = s"data error: user ${user.id} has an unusable password hash ($reason)"
}
