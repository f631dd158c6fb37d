package io.simpleauth.user;

import java.util.Optional;

/**
 * What the password grant reads in its one round trip (spec/README §7): the user of the username, if any, and how many
 * seconds the username stays locked for (0 when it is not locked).
 */
public record Login(Optional<User> user, int lockedForSeconds) {

	public boolean locked() {
		return this.lockedForSeconds > 0;
	}

}
