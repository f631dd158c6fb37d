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
 * The refresh-token statements of spec/README §7, the same text in every stack: a session started (its first token, the
 * username's failure count cleared), a token rotated, the family of a used token revoked (reuse, a disabled user) and the
 * family of any token revoked (POST /revoke). Tokens are passed as their SHA-256 ({@code bytea}). Each throws
 * {@link DatabaseUnavailableException} when the database cannot be reached (see DatabaseErrors), any other data error
 * as Spring's DataAccessException.
 */
@Repository
public class SessionRepository {

	static final String START = """
			WITH cleared AS (DELETE FROM login_failures WHERE username = lower(?))
			INSERT INTO refresh_tokens (token_hash, family_id, user_id, client_id, expires_at)
			VALUES (?, ?, ?, ?, now() + ?::integer * interval '1 second')
			""";

	static final String ROTATE = """
			WITH used AS (
			    UPDATE refresh_tokens SET used_at = now()
			    WHERE token_hash = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now()
			      AND (?::text IS NULL OR client_id = ?::text)
			    RETURNING family_id, user_id, client_id
			), issued AS (
			    INSERT INTO refresh_tokens (token_hash, family_id, user_id, client_id, expires_at)
			    SELECT ?, family_id, user_id, client_id, now() + ?::integer * interval '1 second' FROM used
			)
			SELECT u.id, u.username, u.name, u.email, u.password_hash, used.family_id, used.client_id
			FROM used JOIN users u ON u.id = used.user_id
			""";

	static final String REVOKE_FAMILY_OF_USED = """
			UPDATE refresh_tokens SET revoked_at = now()
			WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = ? AND used_at IS NOT NULL)
			  AND revoked_at IS NULL
			""";

	static final String REVOKE_FAMILY = """
			UPDATE refresh_tokens SET revoked_at = now()
			WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = ?)
			  AND revoked_at IS NULL
			""";

	private static final RowMapper<Session> SESSION = (rs, row) -> new Session(rs.getObject("family_id", UUID.class),
			rs.getString("client_id"), UserRepository.USER.mapRow(rs, row));

	private final JdbcClient jdbc;

	private final OutageLog outages;

	private final int ttlSeconds;

	public SessionRepository(JdbcClient jdbc, OutageLog outages, Settings settings) {
		this.jdbc = jdbc;
		this.outages = outages;
		this.ttlSeconds = settings.refreshTtlSeconds();
	}

	/**
	 * A password grant's success: a new family {@code sid} with its first refresh token, expiring
	 * {@code REFRESH_TTL_SECONDS} from now, and the username's failure count cleared, in one statement.
	 */
	public void start(String username, byte[] tokenHash, UUID sid, UUID userId, String clientId) {
		this.outages.run(() -> this.jdbc.sql(START)
			.params(username, tokenHash, sid, userId, clientId, this.ttlSeconds)
			.update());
	}

	/**
	 * Marks the presented token used — if it is unused, unrevoked, unexpired and, when {@code clientId} is not null, of
	 * that client — and inserts its successor {@code nextHash} in the same family. Empty when nothing was marked.
	 */
	public Optional<Session> rotate(byte[] presentedHash, String clientId, byte[] nextHash) {
		// Typed: for an untyped null Spring would ask the driver for the parameter's type, a round trip of its own.
		SqlParameterValue client = new SqlParameterValue(Types.VARCHAR, clientId);
		return this.outages.run(() -> this.jdbc.sql(ROTATE)
			.params(presentedHash, client, client, nextHash, this.ttlSeconds)
			.query(SESSION)
			.optional());
	}

	/** Revokes the family of the presented token if that token was used before; the rows revoked. */
	public int revokeFamilyOfUsed(byte[] presentedHash) {
		return this.outages.run(() -> this.jdbc.sql(REVOKE_FAMILY_OF_USED).param(presentedHash).update());
	}

	/** Revokes the family of the presented token, whatever its state; the rows revoked. */
	public int revokeFamily(byte[] presentedHash) {
		return this.outages.run(() -> this.jdbc.sql(REVOKE_FAMILY).param(presentedHash).update());
	}

}
