package simpleauth

import java.util.UUID
import java.util.concurrent.ConcurrentHashMap
import org.slf4j.{Logger, LoggerFactory}

/**
 * Logs an unusable stored hash (a disabled user, an unknown scheme) at WARN once per user and every later
 * login of that user at DEBUG, so a client retrying such an account cannot flood the log. Remembers at most
 * `capacity` users, a bound on memory; users beyond it are logged at DEBUG only. Never logs the hash.
 */
final class UnusableHashLog(
    capacity: Int = UnusableHashLog.Capacity,
    log: Logger = LoggerFactory.getLogger(classOf[UnusableHashLog])
) {
  private val warned = ConcurrentHashMap.newKeySet[UUID]()

  /** Logs one refused login of `user`; true when it was logged at WARN. */
  def report(user: User, reason: String): Boolean = {
    val first = warned.size < capacity && warned.add(user.id)
    if (first) log.warn(s"data error: user ${user.id} has an unusable password hash ($reason); login refused")
    else if (log.isDebugEnabled) log.debug(s"data error: user ${user.id} has an unusable password hash ($reason)")
    first
  }
}

object UnusableHashLog {
  val Capacity = 10000
}
