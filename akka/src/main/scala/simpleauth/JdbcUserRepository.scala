package simpleauth

import java.util.UUID
import scala.concurrent.Future

object JdbcUserRepository {
  /**
   * L. The password grant: reserve one attempt for the username and read the user, in one round trip (contract §7,
   * the same text in every stack). Always one row; `id` is NULL for an unknown user, `locked_for` NULL unless this
   * attempt is beyond the limit. `$1` the username, `$2` LOGIN_MAX_FAILURES, `$3` LOGIN_FAILURE_WINDOW_SECONDS.
   */
  val ReserveSql: Statement = new Statement(
    """WITH attempt AS (
      |    INSERT INTO login_failures AS f (username, failures, window_start) VALUES (lower($1), 1, now())
      |    ON CONFLICT (username) DO UPDATE SET
      |        failures     = CASE WHEN f.window_start > now() - $3::integer * interval '1 second'
      |                            THEN least(f.failures + 1, $2::integer + 1) ELSE 1 END,
      |        window_start = CASE WHEN f.window_start > now() - $3::integer * interval '1 second'
      |                            THEN f.window_start ELSE now() END
      |    RETURNING failures, window_start
      |)
      |SELECT u.id, u.username, u.name, u.email, u.password_hash,
      |       CASE WHEN a.failures > $2::integer
      |            THEN greatest(1, ceil(extract(epoch FROM a.window_start + $3::integer * interval '1 second' - now())))::integer
      |       END AS locked_for
      |FROM attempt a LEFT JOIN users u ON u.email = lower($1)""".stripMargin)

  /** G. A password grant shed by the overload limit gives its reservation back. `$1` the username. */
  val ReleaseSql: Statement = new Statement(
    """UPDATE login_failures SET failures = failures - 1 WHERE username = lower($1) AND failures > 0""")
}

/**
 * The login's reservation and read, through [[JdbcDatabase]] (blocking JDBC on the database dispatcher).
 *
 * @param maxFailures   `LOGIN_MAX_FAILURES`
 * @param windowSeconds `LOGIN_FAILURE_WINDOW_SECONDS`
 */
final class JdbcUserRepository(db: JdbcDatabase, maxFailures: Int, windowSeconds: Int) extends UserRepository {
  import JdbcUserRepository.*

  override def reserveLogin(username: String): Future[LoginLookup] =
    db.call { conn =>
      val st = ReserveSql.prepare(conn, username, maxFailures, windowSeconds)
      try {
        val rs = st.executeQuery()
        try {
          if (!rs.next()) LoginLookup(None, None) // not expected: the statement always answers one row
          else {
            val id = rs.getObject(1, classOf[UUID])
            val user = Option(id).map(User(_, rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5)))
            val lockedFor = rs.getInt(6)
            LoginLookup(user, if (rs.wasNull()) None else Some(lockedFor))
          }
        } finally rs.close()
      } finally st.close()
    }

  override def releaseLogin(username: String): Future[Unit] =
    db.call { conn =>
      val st = ReleaseSql.prepare(conn, username)
      try { st.executeUpdate(); () } finally st.close()
    }

  override def ping(): Future[Unit] =
    db.call { conn =>
      val st = conn.createStatement()
      try {
        st.setQueryTimeout(1)
        val rs = st.executeQuery("SELECT 1")
        try { rs.next(); () } finally rs.close()
      } finally st.close()
    }
}
