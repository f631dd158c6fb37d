package simpleauth

import scala.concurrent.Future

/** The database could not be reached, or no pooled connection came in time: 503. */
final class DatabaseUnavailable(cause: Throwable) extends RuntimeException("database unavailable", cause)

/**
 * What the password grant's reservation found: the user (None for an unknown username) and, when this attempt is
 * beyond the username's limit (contract §8), the seconds until its window has passed.
 */
final case class LoginLookup(user: Option[User], lockedForSeconds: Option[Int])

/**
 * Reads the users the token service authenticates, and counts the attempts of each username (`login_failures`,
 * contract §7 and §8). Every call fails with [[DatabaseUnavailable]] in an outage.
 */
trait UserRepository {
  /** L: reserves one attempt for `username` (known or not) in its window and reads the user, in one round trip. */
  def reserveLogin(username: String): Future[LoginLookup]
  /** G: gives a reservation of `username` back (a grant shed by the overload limit). */
  def releaseLogin(username: String): Future[Unit]
  /** `SELECT 1` on a pooled connection. */
  def ping(): Future[Unit]
}
