package simpleauth

import java.util.UUID

import zio.*

/**
 * The password grant's reads and writes (contract §7, §8): the channel API's `users` row with the username's lock in
 * one round trip, and the failure count in `login_failures` (per lowercased username, for every instance at once).
 */
/** The password grant's lookup: the user, if any, and the seconds the username's lock has left, if it is locked. */
final case class LoginLookup(user: Option[User], lockedForSeconds: Option[Long])

trait UserRepository:
  /** The user (None for an unknown username) and, if the username is locked, the seconds its lock has left. */
  def findForLogin(username: String): IO[DatabaseUnavailable, LoginLookup]
  /** One failed login for `lower(username)`, known user or not, in the window that started at its first failure. */
  def recordFailure(username: String): IO[DatabaseUnavailable, Unit]

object UserRepository:
  /** §7, verbatim (`$n` → `?`): always one row; `id` NULL for an unknown user, `locked_for` NULL unless locked. */
  val LoginQuery: String =
    """SELECT u.id, u.username, u.name, u.email, u.password_hash,
      |       CASE WHEN f.failures >= ?::integer
      |            THEN ceil(extract(epoch FROM f.window_start + ?::integer * interval '1 second' - now()))::integer
      |       END AS locked_for
      |FROM (SELECT lower(?) AS login) AS l
      |LEFT JOIN users u ON u.email = l.login
      |LEFT JOIN login_failures f ON f.username = l.login AND f.window_start > now() - ?::integer * interval '1 second'""".stripMargin

  /** §7, verbatim: count a failure, a new window if the last one has passed. */
  val FailureInsert: String =
    """INSERT INTO login_failures AS f (username, failures, window_start) VALUES (lower(?), 1, now())
      |ON CONFLICT (username) DO UPDATE SET
      |    failures     = CASE WHEN f.window_start > now() - ?::integer * interval '1 second' THEN f.failures + 1 ELSE 1 END,
      |    window_start = CASE WHEN f.window_start > now() - ?::integer * interval '1 second' THEN f.window_start ELSE now() END""".stripMargin

  val live: URLayer[Database & Settings, UserRepository] =
    ZLayer.fromFunction((db: Database, cfg: Settings) => Live(db, cfg.limits.loginMaxFailures, cfg.limits.loginFailureWindowSeconds))

  final case class Live(db: Database, maxFailures: Int, windowSeconds: Int) extends UserRepository:
    def findForLogin(username: String): IO[DatabaseUnavailable, LoginLookup] =
      db.withConnection { c =>
        val ps = c.prepareStatement(LoginQuery)
        try
          // JDBC numbers the placeholders in text order: $2, $3, $1, $3.
          ps.setInt(1, maxFailures)
          ps.setInt(2, windowSeconds)
          ps.setString(3, username)
          ps.setInt(4, windowSeconds)
          val rs = ps.executeQuery()
          try
            rs.next() // always one row
            val user = Option(rs.getObject(1, classOf[UUID])).map { id =>
              User(id = id, username = rs.getString(2), name = rs.getString(3), email = rs.getString(4), passwordHash = rs.getString(5))
            }
            val lockedFor = rs.getInt(6)
            LoginLookup(user, if rs.wasNull() then None else Some(math.max(1, lockedFor).toLong))
          finally rs.close()
        finally ps.close()
      }

    def recordFailure(username: String): IO[DatabaseUnavailable, Unit] =
      db.withConnection { c =>
        val ps = c.prepareStatement(FailureInsert)
        try
          ps.setString(1, username)
          ps.setInt(2, windowSeconds)
          ps.setInt(3, windowSeconds)
          ps.executeUpdate()
          ()
        finally ps.close()
      }
