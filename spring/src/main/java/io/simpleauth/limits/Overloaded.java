package io.simpleauth.limits;

/**
 * An argon2id check shed because {@code MAX_PASSWORD_CHECKS} are already running or waiting for a core (spec/README §8).
 * Answered at once like an unavailable database: 503 with {@code Retry-After: 1}.
 */
public class Overloaded extends RuntimeException {

	public Overloaded() {
		// Thrown for every shed request under overload: no stack trace to fill.
		super("too many password checks in progress", null, false, false);
	}

}
