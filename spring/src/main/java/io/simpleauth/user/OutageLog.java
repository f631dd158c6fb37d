package io.simpleauth.user;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import io.simpleauth.config.DatabaseErrors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.stereotype.Component;

/**
 * Logs a database outage as two lines, not one per failed request: a warning (with the cause) when statements start
 * failing for lack of a database, one line when they work again. One for both repositories, so that an outage is two
 * lines whichever statement sees it.
 */
@Component
final class OutageLog {

	private static final Logger log = LoggerFactory.getLogger(UserRepository.class);

	private final AtomicBoolean down = new AtomicBoolean();

	/**
	 * Runs one statement: its result, or {@link DatabaseUnavailableException} when the database cannot be reached (see
	 * DatabaseErrors), any other data error as Spring's DataAccessException.
	 */
	<T> T run(Supplier<T> statement) {
		T result;
		try {
			result = statement.get();
		}
		catch (DataAccessException ex) {
			if (!DatabaseErrors.isUnavailable(ex)) {
				throw ex;
			}
			failed(ex);
			throw new DatabaseUnavailableException(ex);
		}
		succeeded();
		return result;
	}

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
