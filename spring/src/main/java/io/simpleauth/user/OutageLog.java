package io.simpleauth.user;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import io.simpleauth.config.DatabaseErrors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.stereotype.Component;

/**
 * Logs a database outage as two lines, not one per failed request: a warning (with the cause) when statements start
 * failing for lack of a database, one line when they work again. One for both repositories, so that an outage is two
 * lines whichever statement sees it. A statement shed because every pooled connection stayed busy for the acquire
 * timeout ({@link DatabaseErrors#isBusy}) is overload, not an outage: a warning of its own, at most one per
 * {@link #BUSY_INTERVAL_SECONDS}, and no outage begins.
 */
@Component
final class OutageLog {

	private static final Logger log = LoggerFactory.getLogger(UserRepository.class);

	static final long BUSY_INTERVAL_SECONDS = 10;

	private static final long BUSY_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(BUSY_INTERVAL_SECONDS);

	private final AtomicBoolean down = new AtomicBoolean();

	private final LongSupplier nanoTime;

	private final AtomicLong lastBusy;

	OutageLog() {
		this(System::nanoTime);
	}

	/** {@code nanoTime}: the clock of the busy warning's interval, for the tests. */
	OutageLog(LongSupplier nanoTime) {
		this.nanoTime = nanoTime;
		this.lastBusy = new AtomicLong(nanoTime.getAsLong() - BUSY_INTERVAL_NANOS - 1);
	}

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
			if (DatabaseErrors.isBusy(ex)) {
				busy(ex);
			}
			else {
				failed(ex);
			}
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

	/** A statement found every connection busy; returns whether this was logged (at most once per interval). */
	boolean busy(Throwable cause) {
		long now = this.nanoTime.getAsLong();
		long last = this.lastBusy.get();
		if (now - last > BUSY_INTERVAL_NANOS && this.lastBusy.compareAndSet(last, now)) {
			log.warn("database connections all busy, answering 503 to what waits longer than DB_ACQUIRE_TIMEOUT_MS "
					+ "(overload; the database is up): {}", DatabaseErrors.rootCause(cause));
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
