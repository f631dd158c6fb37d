package io.simpleauth.user;

import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/**
 * Reads users by e-mail (pgjdbc caches the prepared statement per connection). Also notes database
 * outages: one warning when lookups start failing for lack of a database, one line when they work again.
 */
@Repository
public class UserRepository {

	private static final Logger log = LoggerFactory.getLogger(UserRepository.class);

	/** The same query in every stack; the column is stored lowercase, so this hits the unique index. */
	static final String FIND_BY_EMAIL = "SELECT id, username, name, email, password_hash FROM users WHERE email = lower(?)";

	private static final RowMapper<User> USER = (rs, row) -> new User(rs.getObject("id", UUID.class),
			rs.getString("username"), rs.getString("name"), rs.getString("email"), rs.getString("password_hash"));

	private final JdbcClient jdbc;

	private final AtomicBoolean unavailable = new AtomicBoolean();

	public UserRepository(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	public Optional<User> findByEmail(String email) {
		Optional<User> user;
		try {
			user = this.jdbc.sql(FIND_BY_EMAIL).param(email).query(USER).optional();
		}
		catch (DataAccessException ex) {
			if (DatabaseErrors.isUnavailable(ex) && this.unavailable.compareAndSet(false, true)) {
				log.warn("database unavailable, /token answers 503 until it is back: {}", DatabaseErrors.rootCause(ex));
			}
			throw ex;
		}
		if (this.unavailable.compareAndSet(true, false)) {
			log.info("database available again");
		}
		return user;
	}

}
