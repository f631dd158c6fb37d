package simpleauth

import java.util.UUID
import scala.concurrent.Future

object JdbcUserRepository {
  /**
   * The password grant: the user and the username's lock in one round trip (contract §7, the same text in every
   * stack, `$n` written `?`). Always one row; `id` is NULL for an unknown user, `locked_for` NULL unless the
   * username is locked. Parameters in the order of the `?`: `$2` LOGIN_MAX_FAILURES,
   * `$3` LOGIN_FAILURE_WINDOW_SECONDS, `$1` the username, `$3` again.
   */
  val FindForLoginSql: String =
    """SELECT u.id, u.username, u.name, u.email, u.password_hash,
      |       CASE WHEN f.failures >= ?::integer
      |            THEN ceil(extract(epoch FROM f.window_start + ?::integer * interval '1 second' - now()))::integer
      |       END AS locked_for
      |FROM (SELECT lower(?) AS login) AS l
      |LEFT JOIN users u ON u.email = l.login
      |LEFT JOIN login_failures f ON f.username = l.login AND f.window_start > now() - ?::integer * interval '1 second'""".stripMargin

  /** The password grant, failure (`invalid_grant`): count it. Parameters: `$1` the username, `$2` the window, twice. */
  val RecordFailureSql: String =
    """INSERT INTO login_failures AS f (username, failures, window_start) VALUES (lower(?), 1, now())
      |ON CONFLICT (username) DO UPDATE SET
      |    failures     = CASE WHEN f.window_start > now() - ?::integer * interval '1 second' THEN f.failures + 1 ELSE 1 END,
      |    window_start = CASE WHEN f.window_start > now() - ?::integer * interval '1 second' THEN f.window_start ELSE now() END""".stripMargin
}

/**
 * The login's reads and the failure count, through [[JdbcDatabase]] (blocking JDBC on the database dispatcher).
 *
 * @param maxFailures   `LOGIN_MAX_FAILURES`
 * @param windowSeconds `LOGIN_FAILURE_WINDOW_SECONDS`
 */
final class JdbcUserRepository(db: JdbcDatabase, maxFailures: Int, windowSeconds: Int) extends UserRepository {
  import JdbcUserRepository.*

  override def findForLogin(username: String): Future[LoginLookup] =
    db.call { conn =>
      val st = conn.prepareStatement(FindForLoginSql)
      try {
        st.setInt(1, maxFailures)
        st.setInt(2, windowSeconds)
        st.setString(3, username)
        st.setInt(4, windowSeconds)
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

  override def recordFailure(username: String): Future[Unit] =
    db.call { conn =>
      val st = conn.prepareStatement(RecordFailureSql)
      try {
        st.setString(1, username)
        st.setInt(2, windowSeconds)
        st.setInt(3, windowSeconds)
        st.executeUpdate()
        ()
      } finally st.close()
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
