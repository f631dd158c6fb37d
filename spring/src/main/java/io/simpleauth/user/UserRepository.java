package io.simpleauth.user;

import java.util.Optional;

import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/** Reads users by e-mail. pgjdbc caches the prepared statement per connection. */
@Repository
public class UserRepository {

	/** The same query in every stack; the column is stored lowercase, so this hits the unique index. */
	static final String FIND_BY_EMAIL = "SELECT id, username, name, email, password_hash FROM users WHERE email = lower(?)";

	private static final RowMapper<User> USER = (rs, row) -> new User(rs.getObject("id", java.util.UUID.class),
			rs.getString("username"), rs.getString("name"), rs.getString("email"), rs.getString("password_hash"));

	private final JdbcClient jdbc;

	public UserRepository(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	public Optional<User> findByEmail(String email) {
		return this.jdbc.sql(FIND_BY_EMAIL).param(email).query(USER).optional();
	}

}
