package io.simpleauth.limits;

/**
 * A password grant refused by a lock (spec/README §8): its username, or the client address it comes from, has failed
 * too often within the window. Answered 429 with {@code Retry-After: retryAfterSeconds}, before any hash is computed.
 */
public class TooManyFailedLogins extends RuntimeException {

	private final long retryAfterSeconds;

	public TooManyFailedLogins(long retryAfterSeconds) {
		// An expected answer, common under a guessing attack: no stack trace to fill.
		super("too many failed logins", null, false, false);
		this.retryAfterSeconds = Math.max(1, retryAfterSeconds);
	}

	/** The lock's remaining seconds, at least 1. */
	public long retryAfterSeconds() {
		return this.retryAfterSeconds;
	}

}
