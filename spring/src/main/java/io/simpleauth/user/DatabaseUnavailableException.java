package io.simpleauth.user;

/**
 * The user database cannot be reached right now: no pooled connection in time, a refused or broken connection, a
 * server shutting down (see DatabaseErrors). Answered 503 with Retry-After; logged once per outage, not per request.
 */
public class DatabaseUnavailableException extends RuntimeException {

	public DatabaseUnavailableException(Throwable cause) {
		// Thrown for every lookup during an outage and never logged: no stack trace to fill.
		super("the user database is unavailable", cause, false, false);
	}

}
