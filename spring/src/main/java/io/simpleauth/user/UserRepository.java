package io.simpleauth.user;

import java.util.Optional;
import java.util.UUID;

import io.simpleauth.config.DatabaseErrors;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/** Reads users by e-mail (pgjdbc caches the prepared statement per connection). */
@Repository
public class UserRepository {

	/** The same query in every stack; the column is stored lowercase, so this hits the unique index. */
	static final String FIND_BY_EMAIL = "SELECT id, username, name, email, password_hash FROM users WHERE email = lower(?)";

	private static final RowMapper<User> USER = (rs, row) -> new User(rs.getObject("id", UUID.class),
			rs.getString("username"), rs.getString("name"), rs.getString("email"), rs.getString("password_hash"));

	private final JdbcClient jdbc;

	private final OutageLog outages = new OutageLog();

	public UserRepository(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	/**
	 * The user, or empty. Throws {@link DatabaseUnavailableException} when the database cannot be reached (see
	 * DatabaseErrors), any other data error as Spring's DataAccessException.
	 */
	public Optional<User> findByEmail(String email) {
		Optional<User> user;
		try {
			user = this.jdbc.sql(FIND_BY_EMAIL).param(email).query(USER).optional();
		}
		catch (DataAccessException ex) {
			if (!DatabaseErrors.isUnavailable(ex)) {
				throw ex;
			}
			this.outages.failed(ex);
			throw new DatabaseUnavailableException(ex);
		}
		this.outages.succeeded();
		return user;
	}

}
