package simpleauth

import java.util.UUID

import zio.*

/**
 * The password grant's reads and writes (contract §7, §8): one attempt reserved for the lowercased username in
 * `login_failures` (for every instance at once) with the channel API's `users` row, in one round trip; and the
 * reservation given back when the grant is shed.
 */
/** The password grant's reservation: the user, if any, and the seconds the username's lock has left, if this attempt is beyond it. */
final case class LoginLookup(user: Option[User], lockedForSeconds: Option[Long])

trait UserRepository:
  /** L: one attempt reserved for `username` (known or not) in its window, and the user (None for an unknown username). */
  def reserveLogin(username: String): IO[DatabaseUnavailable, LoginLookup]
  /** G: the reservation of `username` given back (a grant shed by the overload limit). */
  def releaseLogin(username: String): IO[DatabaseUnavailable, Unit]

object UserRepository:
  /** §7 L, verbatim: always one row; `id` NULL for an unknown user, `locked_for` NULL unless this attempt is beyond the limit. */
  val Reserve: Statement = Statement(
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

  /** §7 G, verbatim. */
  val Release: Statement = Statement(
    """UPDATE login_failures SET failures = failures - 1 WHERE username = lower($1) AND failures > 0""")

  val live: URLayer[Database & Settings, UserRepository] =
    ZLayer.fromFunction((db: Database, cfg: Settings) => Live(db, cfg.limits.loginMaxFailures, cfg.limits.loginFailureWindowSeconds))

  final case class Live(db: Database, maxFailures: Int, windowSeconds: Int) extends UserRepository:
    def reserveLogin(username: String): IO[DatabaseUnavailable, LoginLookup] =
      db.withConnection { c =>
        // $1 the username, $2 LOGIN_MAX_FAILURES, $3 LOGIN_FAILURE_WINDOW_SECONDS (bound in the text's order of the `?`).
        val ps = Reserve.prepare(c, username, maxFailures, windowSeconds)
        try
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

    def releaseLogin(username: String): IO[DatabaseUnavailable, Unit] =
      db.withConnection { c =>
        val ps = Release.prepare(c, username)
        try
          ps.executeUpdate()
          ()
        finally ps.close()
      }
