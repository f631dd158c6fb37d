package io.simpleauth.user;

import java.sql.Types;
import java.util.Optional;
import java.util.UUID;

import io.simpleauth.config.Settings;

import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.SqlParameterValue;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/**
 * The session statements S, R, U and V of spec/README §7, the same text in every stack (see {@link Statement}): a
 * session started with its first refresh token (only if the user's hash is still the one verified; the username's
 * count cleared), a token rotated (its session locked FOR SHARE, so a revocation cannot miss a successor), the session
 * of a used token revoked (reuse) and the session of any token revoked (POST /revoke). Tokens are passed as their
 * SHA-256 ({@code bytea}). Each throws {@link DatabaseUnavailableException} when the database cannot be reached (see
 * DatabaseErrors), any other data error as Spring's DataAccessException.
 */
@Repository
public class SessionRepository {

	/**
	 * S. 0 rows inserted: the credentials changed since they were verified. $1 username, $2 SHA-256 of the refresh
	 * token, $3 the sid, $4 the user's id, $5 client_id, $6 REFRESH_TTL_SECONDS, $7 REFRESH_MAX_LIFETIME_SECONDS, $8 the
	 * password_hash the check verified.
	 */
	static final Statement START = Statement.of("""
			WITH session AS (
			    INSERT INTO sessions (family_id, user_id, client_id, credential, expires_at)
			    SELECT $3, u.id, $5, sha256(convert_to(u.password_hash, 'UTF8')), now() + $7::integer * interval '1 second'
			    FROM users u WHERE u.id = $4 AND u.password_hash = $8
			    RETURNING family_id, expires_at
			), cleared AS (
			    DELETE FROM login_failures WHERE username = lower($1) AND EXISTS (SELECT 1 FROM session)
			)
			INSERT INTO refresh_tokens (token_hash, family_id, expires_at)
			SELECT $2, family_id, least(now() + $6::integer * interval '1 second', expires_at) FROM session
			""");

	/**
	 * R. Revoked, expired, another client's or a changed credential: no row. $1 SHA-256 of the presented token, $2 the
	 * request's client_id or NULL, $3 SHA-256 of the new token, $4 REFRESH_TTL_SECONDS.
	 */
	static final Statement ROTATE = Statement.of("""
			WITH session AS (
			    SELECT s.family_id, s.user_id, s.client_id
			    FROM refresh_tokens t
			    JOIN sessions s ON s.family_id = t.family_id
			    JOIN users u ON u.id = s.user_id
			    WHERE t.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
			      AND ($2::text IS NULL OR s.client_id = $2::text)
			      AND sha256(convert_to(u.password_hash, 'UTF8')) = s.credential
			    FOR SHARE OF s
			), used AS (
			    UPDATE refresh_tokens t SET used_at = now()
			    FROM session
			    WHERE t.token_hash = $1 AND t.family_id = session.family_id AND t.used_at IS NULL AND t.expires_at > now()
			    RETURNING t.family_id
			), issued AS (
			    INSERT INTO refresh_tokens (token_hash, family_id, expires_at)
			    SELECT $3, s.family_id, least(now() + $4::integer * interval '1 second', s.expires_at)
			    FROM used JOIN sessions s ON s.family_id = used.family_id
			)
			SELECT u.id, u.username, u.name, u.email, u.password_hash, session.family_id, session.client_id
			FROM used JOIN session ON session.family_id = used.family_id JOIN users u ON u.id = session.user_id
			""");

	/** U. Reuse: the session of a used token revoked. $1 SHA-256 of the presented token. */
	static final Statement REVOKE_FAMILY_OF_USED = Statement.of("""
			UPDATE sessions SET revoked_at = now()
			WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1 AND used_at IS NOT NULL)
			  AND revoked_at IS NULL
			""");

	/** V. POST /revoke: the session of any token revoked. $1 SHA-256 of the presented token. */
	static final Statement REVOKE_FAMILY = Statement.of("""
			UPDATE sessions SET revoked_at = now()
			WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1)
			  AND revoked_at IS NULL
			""");

	private static final RowMapper<Session> SESSION = (rs, row) -> new Session(rs.getObject("family_id", UUID.class),
			rs.getString("client_id"), UserRepository.USER.mapRow(rs, row));

	private final JdbcClient jdbc;

	private final OutageLog outages;

	private final int ttlSeconds;

	private final int maxLifetimeSeconds;

	public SessionRepository(JdbcClient jdbc, OutageLog outages, Settings settings) {
		this.jdbc = jdbc;
		this.outages = outages;
		this.ttlSeconds = settings.refreshTtlSeconds();
		this.maxLifetimeSeconds = settings.refreshMaxLifetimeSeconds();
	}

	/**
	 * Statement S, a password grant's success: the session {@code sid}, ending {@code REFRESH_MAX_LIFETIME_SECONDS}
	 * from now, with its first refresh token, and the username's count cleared — only if the user's stored hash is
	 * still {@code verifiedHash}. False when it is not (nothing was written): the credentials changed meanwhile.
	 */
	public boolean start(String username, byte[] tokenHash, UUID sid, UUID userId, String clientId,
			String verifiedHash) {
		return this.outages.run(() -> this.jdbc.sql(START.jdbc())
			.params(START.bind(username, tokenHash, sid, userId, clientId, this.ttlSeconds, this.maxLifetimeSeconds,
					verifiedHash))
			.update()) == 1;
	}

	/**
	 * Statement R: marks the presented token used — if it is unused and unexpired, and its session alive (not revoked,
	 * not ended, the user's hash the one its login verified) and, when {@code clientId} is not null, of that client —
	 * and inserts its successor {@code nextHash} in the same session. Empty when nothing was marked.
	 */
	public Optional<Session> rotate(byte[] presentedHash, String clientId, byte[] nextHash) {
		// Typed: for an untyped null Spring would ask the driver for the parameter's type, a round trip of its own.
		SqlParameterValue client = new SqlParameterValue(Types.VARCHAR, clientId);
		return this.outages.run(() -> this.jdbc.sql(ROTATE.jdbc())
			.params(ROTATE.bind(presentedHash, client, nextHash, this.ttlSeconds))
			.query(SESSION)
			.optional());
	}

	/** Statement U: revokes the session of the presented token if that token was used before; the rows revoked. */
	public int revokeFamilyOfUsed(byte[] presentedHash) {
		return this.outages.run(() -> this.jdbc.sql(REVOKE_FAMILY_OF_USED.jdbc())
			.params(REVOKE_FAMILY_OF_USED.bind((Object) presentedHash))
			.update());
	}

	/** Statement V: revokes the session of the presented token, whatever its state; the rows revoked. */
	public int revokeFamily(byte[] presentedHash) {
		return this.outages.run(() -> this.jdbc.sql(REVOKE_FAMILY.jdbc())
			.params(REVOKE_FAMILY.bind((Object) presentedHash))
			.update());
	}

}
