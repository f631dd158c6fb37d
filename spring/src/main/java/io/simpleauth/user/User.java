package io.simpleauth.user;

import java.util.UUID;

/** A row of the channel API's {@code users} table, as far as the token service reads it. */
public record User(UUID id, String username, String name, String email, String passwordHash) {

	/** Never print the hash. */
	@Override
	public String toString() {
		return "User[id=" + this.id + ", username=" + this.username + "]";
	}

}
