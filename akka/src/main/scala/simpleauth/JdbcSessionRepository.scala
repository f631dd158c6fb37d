package simpleauth

import java.sql.{Connection, Types}
import java.util.UUID
import scala.concurrent.Future

object JdbcSessionRepository {
  /**
   * The password grant, success: the session's first refresh token, the failure count cleared (contract §7).
   * Parameters: `$1` the username, `$2` the token's SHA-256, `$3` the family (the `sid`), `$4` the user's id,
   * `$5` client_id, `$6` REFRESH_TTL_SECONDS.
   */
  val StartSql: String =
    """WITH cleared AS (DELETE FROM login_failures WHERE username = lower(?))
      |INSERT INTO refresh_tokens (token_hash, family_id, user_id, client_id, expires_at)
      |VALUES (?, ?, ?, ?, now() + ?::integer * interval '1 second')""".stripMargin

  /**
   * The refresh grant: rotate. Parameters: `$1` the presented token's SHA-256, `$2` the request's client_id or
   * NULL (twice), `$3` the new token's SHA-256, `$4` REFRESH_TTL_SECONDS.
   */
  val RotateSql: String =
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

  /** The refresh grant when rotate returned no row (reuse), and a disabled user's family. `$1` the presented token's SHA-256. */
  val RevokeUsedSql: String =
    """UPDATE refresh_tokens SET revoked_at = now()
      |WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = ? AND used_at IS NOT NULL)
      |  AND revoked_at IS NULL""".stripMargin

  /** POST /revoke: revoke the family of any token. `$1` the presented token's SHA-256. */
  val RevokeFamilySql: String =
    """UPDATE refresh_tokens SET revoked_at = now()
      |WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = ?)
      |  AND revoked_at IS NULL""".stripMargin
}

/**
 * The refresh tokens, through [[JdbcDatabase]] (blocking JDBC on the database dispatcher).
 *
 * @param refreshTtlSeconds `REFRESH_TTL_SECONDS`
 */
final class JdbcSessionRepository(db: JdbcDatabase, refreshTtlSeconds: Int) extends SessionRepository {
  import JdbcSessionRepository.*

  override def start(username: String, tokenHash: Array[Byte], familyId: UUID, userId: UUID, clientId: String): Future[Unit] =
    db.call { conn =>
      val st = conn.prepareStatement(StartSql)
      try {
        st.setString(1, username)
        st.setBytes(2, tokenHash)
        st.setObject(3, familyId)
        st.setObject(4, userId)
        st.setString(5, clientId)
        st.setInt(6, refreshTtlSeconds)
        st.executeUpdate()
        ()
      } finally st.close()
    }

  override def rotate(presentedHash: Array[Byte], clientId: Option[String], nextHash: Array[Byte]): Future[Option[Rotation]] =
    db.call { conn =>
      val st = conn.prepareStatement(RotateSql)
      try {
        st.setBytes(1, presentedHash)
        clientId match {
          case Some(c) => st.setString(2, c); st.setString(3, c)
          case None    => st.setNull(2, Types.VARCHAR); st.setNull(3, Types.VARCHAR)
        }
        st.setBytes(4, nextHash)
        st.setInt(5, refreshTtlSeconds)
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

  private def update(sql: String, tokenHash: Array[Byte])(conn: Connection): Int = {
    val st = conn.prepareStatement(sql)
    try {
      st.setBytes(1, tokenHash)
      st.executeUpdate()
    } finally st.close()
  }
}
