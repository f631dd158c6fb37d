package simpleauth

import java.util.UUID

import zio.*

/** What a refresh grant's rotation returns: the user as the database has it now, the family and its client. */
final case class Rotated(user: User, familyId: UUID, clientId: String)

/**
 * Sessions (`sessions`, one per refresh-token family, its id the tokens' `sid`) and their refresh tokens
 * (`refresh_tokens`, only their SHA-256), contract §6 and §7. Each method is one of §7's statements, verbatim.
 */
trait SessionRepository:
  /**
   * S: a password grant's success: a new session bound to the stored hash the check verified (`verifiedHash`) with its
   * first token, the username's count cleared; false (nothing written) when the user's stored hash changed meanwhile.
   */
  def start(username: String, tokenHash: Array[Byte], familyId: UUID, userId: UUID, clientId: String, verifiedHash: String): IO[DatabaseUnavailable, Boolean]
  /**
   * R: marks the presented token used — only if it is unused and unexpired and its session alive (not revoked, not past
   * its lifetime, its user's hash unchanged) and (if `clientId` is given) of that client — and inserts `successor` in
   * its family. None when nothing was marked.
   */
  def rotate(presented: Array[Byte], clientId: Option[String], successor: Array[Byte]): IO[DatabaseUnavailable, Option[Rotated]]
  /** U: revokes the session of a token that was used before (reuse); the sessions it revoked. */
  def revokeUsed(presented: Array[Byte]): IO[DatabaseUnavailable, Int]
  /** V: `POST /revoke`: revokes the session of any token; the sessions it revoked. */
  def revoke(presented: Array[Byte]): IO[DatabaseUnavailable, Int]

object SessionRepository:
  /** §7 S. */
  val Start: Statement = Statement(
    """WITH session AS (
      |    INSERT INTO sessions (family_id, user_id, client_id, credential, expires_at)
      |    SELECT $3, u.id, $5, sha256(convert_to(u.password_hash, 'UTF8')), now() + $7::integer * interval '1 second'
      |    FROM users u WHERE u.id = $4 AND u.password_hash = $8
      |    RETURNING family_id, expires_at
      |), cleared AS (
      |    DELETE FROM login_failures WHERE username = lower($1) AND EXISTS (SELECT 1 FROM session)
      |)
      |INSERT INTO refresh_tokens (token_hash, family_id, expires_at)
      |SELECT $2, family_id, least(now() + $6::integer * interval '1 second', expires_at) FROM session""".stripMargin)

  /** §7 R: the session row locked FOR SHARE, so that a revocation waits for the rotation. */
  val Rotate: Statement = Statement(
    """WITH session AS (
      |    SELECT s.family_id, s.user_id, s.client_id
      |    FROM refresh_tokens t
      |    JOIN sessions s ON s.family_id = t.family_id
      |    JOIN users u ON u.id = s.user_id
      |    WHERE t.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
      |      AND ($2::text IS NULL OR s.client_id = $2::text)
      |      AND sha256(convert_to(u.password_hash, 'UTF8')) = s.credential
      |    FOR SHARE OF s
      |), used AS (
      |    UPDATE refresh_tokens t SET used_at = now()
      |    FROM session
      |    WHERE t.token_hash = $1 AND t.family_id = session.family_id AND t.used_at IS NULL AND t.expires_at > now()
      |    RETURNING t.family_id
      |), issued AS (
      |    INSERT INTO refresh_tokens (token_hash, family_id, expires_at)
      |    SELECT $3, s.family_id, least(now() + $4::integer * interval '1 second', s.expires_at)
      |    FROM used JOIN sessions s ON s.family_id = used.family_id
      |)
      |SELECT u.id, u.username, u.name, u.email, u.password_hash, session.family_id, session.client_id
      |FROM used JOIN session ON session.family_id = used.family_id JOIN users u ON u.id = session.user_id""".stripMargin)

  /** §7 U. */
  val RevokeUsed: Statement = Statement(
    """UPDATE sessions SET revoked_at = now()
      |WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1 AND used_at IS NOT NULL)
      |  AND revoked_at IS NULL""".stripMargin)

  /** §7 V. */
  val Revoke: Statement = Statement(
    """UPDATE sessions SET revoked_at = now()
      |WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1)
      |  AND revoked_at IS NULL""".stripMargin)

  val live: URLayer[Database & Settings, SessionRepository] =
    ZLayer.fromFunction((db: Database, cfg: Settings) => Live(db, cfg.limits.refreshTtlSeconds, cfg.limits.refreshMaxLifetimeSeconds))

  final case class Live(db: Database, refreshTtlSeconds: Int, maxLifetimeSeconds: Int) extends SessionRepository:
    def start(username: String, tokenHash: Array[Byte], familyId: UUID, userId: UUID, clientId: String, verifiedHash: String): IO[DatabaseUnavailable, Boolean] =
      db.withConnection { c =>
        val ps = Start.prepare(c, username, tokenHash, familyId, userId, clientId, refreshTtlSeconds, maxLifetimeSeconds, verifiedHash)
        try ps.executeUpdate() > 0
        finally ps.close()
      }

    def rotate(presented: Array[Byte], clientId: Option[String], successor: Array[Byte]): IO[DatabaseUnavailable, Option[Rotated]] =
      db.withConnection { c =>
        val ps = Rotate.prepare(c, presented, clientId, successor, refreshTtlSeconds)
        try
          val rs = ps.executeQuery()
          try
            if rs.next() then
              val user = User(
                id = rs.getObject(1, classOf[UUID]),
                username = rs.getString(2),
                name = rs.getString(3),
                email = rs.getString(4),
                passwordHash = rs.getString(5)
              )
              Some(Rotated(user, rs.getObject(6, classOf[UUID]), rs.getString(7)))
            else None
          finally rs.close()
        finally ps.close()
      }

    def revokeUsed(presented: Array[Byte]): IO[DatabaseUnavailable, Int] = update(RevokeUsed, presented)

    def revoke(presented: Array[Byte]): IO[DatabaseUnavailable, Int] = update(Revoke, presented)

    private def update(sql: Statement, presented: Array[Byte]): IO[DatabaseUnavailable, Int] =
      db.withConnection { c =>
        val ps = sql.prepare(c, presented)
        try ps.executeUpdate()
        finally ps.close()
      }
