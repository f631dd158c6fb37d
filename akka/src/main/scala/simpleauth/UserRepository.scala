package simpleauth

import scala.concurrent.Future

/** The database could not be reached, or no pooled connection came in time: 503. */
final class DatabaseUnavailable(cause: Throwable) extends RuntimeException("database unavailable", cause)

/**
 * What the password grant's lookup found: the user (None for an unknown username) and, when the username is
 * locked (contract §8), the seconds until its failure window has passed.
 */
final case class LoginLookup(user: Option[User], lockedForSeconds: Option[Int])

/**
 * Reads the users the token service authenticates, and counts their failed logins (`login_failures`, contract
 * §8). Every call fails with [[DatabaseUnavailable]] in an outage.
 */
trait UserRepository {
  /** The user and the username's lock, in one round trip. */
  def findForLogin(username: String): Future[LoginLookup]
  /** Counts one failed login of `username` (known or not) in its window. */
  def recordFailure(username: String): Future[Unit]
  /** `SELECT 1` on a pooled connection. */
  def ping(): Future[Unit]
}
