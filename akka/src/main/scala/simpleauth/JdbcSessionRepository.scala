package simpleauth

import java.sql.Connection
import java.util.UUID
import scala.concurrent.Future

object JdbcSessionRepository {
  /**
   * S. The password grant, success: the session and its first refresh token, only if the user's hash is still the
   * one verified; the username's count cleared (contract §7). 0 rows inserted: the credentials changed meanwhile.
   * `$1` the username, `$2` the token's SHA-256, `$3` the sid, `$4` the user's id, `$5` client_id,
   * `$6` REFRESH_TTL_SECONDS, `$7` REFRESH_MAX_LIFETIME_SECONDS, `$8` the password_hash the check verified.
   */
  val StartSql: Statement = new Statement(
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

  /**
   * R. The refresh grant: rotate, the session row locked FOR SHARE (so a revocation waits for it); a revoked,
   * expired or another client's session, or one whose user's hash changed, gives no row. `$1` the presented token's
   * SHA-256, `$2` the request's client_id or NULL, `$3` the new token's SHA-256, `$4` REFRESH_TTL_SECONDS.
   */
  val RotateSql: Statement = new Statement(
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

  /** U. The refresh grant when R returned no row: reuse revokes the family of a used token. `$1` its SHA-256. */
  val RevokeUsedSql: Statement = new Statement(
    """UPDATE sessions SET revoked_at = now()
      |WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1 AND used_at IS NOT NULL)
      |  AND revoked_at IS NULL""".stripMargin)

  /** V. POST /revoke: revoke the family of any token. `$1` the presented token's SHA-256. */
  val RevokeFamilySql: Statement = new Statement(
    """UPDATE sessions SET revoked_at = now()
      |WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1)
      |  AND revoked_at IS NULL""".stripMargin)
}

/**
 * The sessions and their refresh tokens, through [[JdbcDatabase]] (blocking JDBC on the database dispatcher).
 *
 * @param refreshTtlSeconds  `REFRESH_TTL_SECONDS`
 * @param maxLifetimeSeconds `REFRESH_MAX_LIFETIME_SECONDS`
 */
final class JdbcSessionRepository(db: JdbcDatabase, refreshTtlSeconds: Int, maxLifetimeSeconds: Int) extends SessionRepository {
  import JdbcSessionRepository.*

  override def start(
      username: String,
      tokenHash: Array[Byte],
      familyId: UUID,
      userId: UUID,
      clientId: String,
      verifiedHash: String
  ): Future[Boolean] =
    db.call { conn =>
      val st = StartSql.prepare(conn, username, tokenHash, familyId, userId, clientId, refreshTtlSeconds, maxLifetimeSeconds,
        verifiedHash)
      try st.executeUpdate() > 0
      finally st.close()
    }

  override def rotate(presentedHash: Array[Byte], clientId: Option[String], nextHash: Array[Byte]): Future[Option[Rotation]] =
    db.call { conn =>
      val st = RotateSql.prepare(conn, presentedHash, clientId, nextHash, refreshTtlSeconds)
      try {
        val rs = st.executeQuery()
        try
          if (!rs.next()) None
          else {
            val user = User(rs.getObject(1, classOf[UUID]), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5))
            Some(Rotation(user, rs.getObject(6, classOf[UUID]), rs.getString(7)))
          }
        finally rs.close()
      } finally st.close()
    }

  override def revokeUsed(tokenHash: Array[Byte]): Future[Int] = db.call(update(RevokeUsedSql, tokenHash))

  override def revokeFamily(tokenHash: Array[Byte]): Future[Int] = db.call(update(RevokeFamilySql, tokenHash))

  private def update(sql: Statement, tokenHash: Array[Byte])(conn: Connection): Int = {
    val st = sql.prepare(conn, tokenHash)
    try st.executeUpdate()
    finally st.close()
  }
}
