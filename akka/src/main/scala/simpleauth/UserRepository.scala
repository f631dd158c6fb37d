package simpleauth

import scala.concurrent.Future

/** The database could not be reached, or no pooled connection came in time: 503. */
final class DatabaseUnavailable(cause: Throwable) extends RuntimeException("database unavailable", cause)

/** Reads the users the token service authenticates. Both calls fail with [[DatabaseUnavailable]] in an outage. */
trait UserRepository {
  def findByEmail(email: String): Future[Option[User]]
  /** `SELECT 1` on a pooled connection. */
  def ping(): Future[Unit]
}
