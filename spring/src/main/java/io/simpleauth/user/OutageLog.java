package io.simpleauth.user;

import java.util.concurrent.atomic.AtomicBoolean;

import io.simpleauth.config.DatabaseErrors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs a database outage as two lines, not one per failed request: a warning (with the cause) when lookups start
 * failing for lack of a database, one line when they work again.
 */
final class OutageLog {

	private static final Logger log = LoggerFactory.getLogger(UserRepository.class);

	private final AtomicBoolean down = new AtomicBoolean();

	/** A lookup failed for lack of a database; returns whether this started an outage (and was logged). */
	boolean failed(Throwable cause) {
		if (this.down.compareAndSet(false, true)) {
			log.warn("database unavailable, /token answers 503 until it is back: {}", DatabaseErrors.rootCause(cause));
			return true;
		}
		return false;
	}

	/** A lookup worked; returns whether this ended an outage (and was logged). */
	boolean succeeded() {
		if (this.down.get() && this.down.compareAndSet(true, false)) {
			log.info("database available again");
			return true;
		}
		return false;
	}

}
