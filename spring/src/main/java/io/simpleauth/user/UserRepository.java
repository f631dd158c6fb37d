package io.simpleauth.user;

import java.util.Optional;
import java.util.UUID;

import io.simpleauth.config.Settings;

import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/**
 * The password grant's statements (spec/README §7, the same text in every stack; pgjdbc caches the prepared statements
 * per connection): the user and the username's lock in one round trip, and a failed login counted for the username.
 * Each throws {@link DatabaseUnavailableException} when the database cannot be reached (see DatabaseErrors), any other
 * data error as Spring's DataAccessException.
 */
@Repository
public class UserRepository {

	/** Always one row: id NULL for an unknown user, locked_for NULL unless the username is locked. */
	static final String FIND_FOR_LOGIN = """
			SELECT u.id, u.username, u.name, u.email, u.password_hash,
			       CASE WHEN f.failures >= ?::integer
			            THEN ceil(extract(epoch FROM f.window_start + ?::integer * interval '1 second' - now()))::integer
			       END AS locked_for
			FROM (SELECT lower(?) AS login) AS l
			LEFT JOIN users u ON u.email = l.login
			LEFT JOIN login_failures f ON f.username = l.login AND f.window_start > now() - ?::integer * interval '1 second'
			""";

	static final String COUNT_FAILURE = """
			INSERT INTO login_failures AS f (username, failures, window_start) VALUES (lower(?), 1, now())
			ON CONFLICT (username) DO UPDATE SET
			    failures     = CASE WHEN f.window_start > now() - ?::integer * interval '1 second' THEN f.failures + 1 ELSE 1 END,
			    window_start = CASE WHEN f.window_start > now() - ?::integer * interval '1 second' THEN f.window_start ELSE now() END
			""";

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

	/** The user of this username (an e-mail address, matched case-insensitively), and the username's lock. */
	public Login findForLogin(String username) {
		return this.outages.run(() -> this.jdbc.sql(FIND_FOR_LOGIN)
			.params(this.maxFailures, this.windowSeconds, username, this.windowSeconds)
			.query(LOGIN)
			.single());
	}

	/** One failed password grant for this username (known or not), in its window or a new one from now. */
	public void countFailure(String username) {
		this.outages.run(() -> this.jdbc.sql(COUNT_FAILURE).params(username, this.windowSeconds, this.windowSeconds).update());
	}

}
