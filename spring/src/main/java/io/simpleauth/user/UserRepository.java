package io.simpleauth.user;

import java.util.Optional;
import java.util.UUID;

import io.simpleauth.config.Settings;

import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/**
 * The password grant's statements L and G of spec/README §7 (the same text in every stack, see {@link Statement};
 * pgjdbc caches the prepared statements per connection): one attempt reserved for the username and the user read in
 * one round trip, and a reservation given back by a shed grant. Each throws {@link DatabaseUnavailableException} when
 * the database cannot be reached (see DatabaseErrors), any other data error as Spring's DataAccessException.
 */
@Repository
public class UserRepository {

	/**
	 * L. Always one row: id NULL for an unknown user, locked_for NULL unless this attempt is beyond the limit.
	 * $1 username, $2 LOGIN_MAX_FAILURES, $3 LOGIN_FAILURE_WINDOW_SECONDS.
	 */
	static final Statement RESERVE_LOGIN = Statement.of("""
			WITH attempt AS (
			    INSERT INTO login_failures AS f (username, failures, window_start) VALUES (lower($1), 1, now())
			    ON CONFLICT (username) DO UPDATE SET
			        failures     = CASE WHEN f.window_start > now() - $3::integer * interval '1 second'
			                            THEN least(f.failures + 1, $2::integer + 1) ELSE 1 END,
			        window_start = CASE WHEN f.window_start > now() - $3::integer * interval '1 second'
			                            THEN f.window_start ELSE now() END
			    RETURNING failures, window_start
			)
			SELECT u.id, u.username, u.name, u.email, u.password_hash,
			       CASE WHEN a.failures > $2::integer
			            THEN greatest(1, ceil(extract(epoch FROM a.window_start + $3::integer * interval '1 second' - now())))::integer
			       END AS locked_for
			FROM attempt a LEFT JOIN users u ON u.email = lower($1)
			""");

	/** G. A grant shed by the overload limit gives its reservation back. $1 username. */
	static final Statement GIVE_BACK = Statement.of("""
			UPDATE login_failures SET failures = failures - 1 WHERE username = lower($1) AND failures > 0
			""");

	/** The columns of a user, as the login lookup and the rotate statement both return them. */
	static final RowMapper<User> USER = (rs, row) -> new User(rs.getObject("id", UUID.class), rs.getString("username"),
			rs.getString("name"), rs.getString("email"), rs.getString("password_hash"));

	private static final RowMapper<Login> LOGIN = (rs, row) -> {
		Integer lockedFor = rs.getObject("locked_for", Integer.class);
		Optional<User> user = rs.getObject("id") == null ? Optional.empty() : Optional.of(USER.mapRow(rs, row));
		return new Login(user, lockedFor == null ? 0 : Math.max(1, lockedFor));
	};

	private final JdbcClient jdbc;

	private final OutageLog outages;

	private final int maxFailures;

	private final int windowSeconds;

	public UserRepository(JdbcClient jdbc, OutageLog outages, Settings settings) {
		this.jdbc = jdbc;
		this.outages = outages;
		this.maxFailures = settings.loginMaxFailures();
		this.windowSeconds = settings.loginFailureWindowSeconds();
	}

	/**
	 * Statement L: one attempt reserved for this username (an e-mail address, matched case-insensitively) in its
	 * window, and its user; locked when the attempt is beyond {@code LOGIN_MAX_FAILURES}.
	 */
	public Login reserveLogin(String username) {
		return this.outages.run(() -> this.jdbc.sql(RESERVE_LOGIN.jdbc())
			.params(RESERVE_LOGIN.bind(username, this.maxFailures, this.windowSeconds))
			.query(LOGIN)
			.single());
	}

	/** Statement G: the username's reserved attempt given back (a grant shed before its password was checked). */
	public void giveBack(String username) {
		this.outages.run(() -> this.jdbc.sql(GIVE_BACK.jdbc()).params(GIVE_BACK.bind(username)).update());
	}

}
