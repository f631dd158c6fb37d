package simpleauth

import java.util.UUID

import zio.*

/** What a refresh grant's rotation returns: the user as the database has it now, the family and its client. */
final case class Rotated(user: User, familyId: UUID, clientId: String)

/**
 * Sessions in `refresh_tokens` (contract §7): only tokens' SHA-256 are stored. A family is one session, its id the
 * tokens' `sid`. Each method is one of §7's statements, verbatim but for `$n` → `?`.
 */
trait SessionRepository:
  /** A password grant's success: a new family with its first token; the username's failure count cleared. */
  def start(username: String, tokenHash: Array[Byte], familyId: UUID, userId: UUID, clientId: String): IO[DatabaseUnavailable, Unit]
  /**
   * Marks the presented token used — only if it is unused, unrevoked, unexpired and (if `clientId` is given) of that
   * client — and inserts `successor` in its family. None when nothing was marked.
   */
  def rotate(presented: Array[Byte], clientId: Option[String], successor: Array[Byte]): IO[DatabaseUnavailable, Option[Rotated]]
  /** Revokes the family of a token that was used before (reuse, or a disabled user's); the rows it revoked. */
  def revokeUsed(presented: Array[Byte]): IO[DatabaseUnavailable, Int]
  /** `POST /revoke`: revokes the family of any token; the rows it revoked. */
  def revoke(presented: Array[Byte]): IO[DatabaseUnavailable, Int]

object SessionRepository:
  val Start: String =
    """WITH cleared AS (DELETE FROM login_failures WHERE username = lower(?))
      |INSERT INTO refresh_tokens (token_hash, family_id, user_id, client_id, expires_at)
      |VALUES (?, ?, ?, ?, now() + ?::integer * interval '1 second')""".stripMargin

  val Rotate: String =
    """WITH used AS (
      |    UPDATE refresh_tokens SET used_at = now()
      |    WHERE token_hash = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now()
      |      AND (?::text IS NULL OR client_id = ?::text)
      |    RETURNING family_id, user_id, client_id
      |), issued AS (
      |    INSERT INTO refresh_tokens (token_hash, family_id, user_id, client_id, expires_at)
      |    SELECT ?, family_id, user_id, client_id, now() + ?::integer * interval '1 second' FROM used
      |)
      |SELECT u.id, u.username, u.name, u.email, u.password_hash, used.family_id, used.client_id
      |FROM used JOIN users u ON u.id = used.user_id""".stripMargin

  val RevokeUsed: String =
    """UPDATE refresh_tokens SET revoked_at = now()
      |WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = ? AND used_at IS NOT NULL)
      |  AND revoked_at IS NULL""".stripMargin

  val Revoke: String =
    """UPDATE refresh_tokens SET revoked_at = now()
      |WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = ?)
      |  AND revoked_at IS NULL""".stripMargin

  val live: URLayer[Database & Settings, SessionRepository] =
    ZLayer.fromFunction((db: Database, cfg: Settings) => Live(db, cfg.limits.refreshTtlSeconds))

  final case class Live(db: Database, refreshTtlSeconds: Int) extends SessionRepository:
    def start(username: String, tokenHash: Array[Byte], familyId: UUID, userId: UUID, clientId: String): IO[DatabaseUnavailable, Unit] =
      db.withConnection { c =>
        val ps = c.prepareStatement(Start)
        try
          ps.setString(1, username)
          ps.setBytes(2, tokenHash)
          ps.setObject(3, familyId)
          ps.setObject(4, userId)
          ps.setString(5, clientId)
          ps.setInt(6, refreshTtlSeconds)
          ps.executeUpdate()
          ()
        finally ps.close()
      }

    def rotate(presented: Array[Byte], clientId: Option[String], successor: Array[Byte]): IO[DatabaseUnavailable, Option[Rotated]] =
      db.withConnection { c =>
        val ps = c.prepareStatement(Rotate)
        try
          // $1, $2, $2, $3, $4 in text order.
          ps.setBytes(1, presented)
          ps.setString(2, clientId.orNull)
          ps.setString(3, clientId.orNull)
          ps.setBytes(4, successor)
          ps.setInt(5, refreshTtlSeconds)
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

    private def update(sql: String, presented: Array[Byte]): IO[DatabaseUnavailable, Int] =
      db.withConnection { c =>
        val ps = c.prepareStatement(sql)
        try
          ps.setBytes(1, presented)
          ps.executeUpdate()
        finally ps.close()
      }
