package io.simpleauth.limits;

import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;

import io.simpleauth.config.Settings;
import io.simpleauth.metrics.Metrics;
import io.simpleauth.metrics.Metrics.Rejection;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * The overload limit of spec/README §8: at most {@code MAX_PASSWORD_CHECKS} argon2id checks admitted at once, running
 * on the CPU pool or waiting for one of its threads. A {@link Semaphore} taken with {@code tryAcquire}, so one more is
 * refused at once ({@link Overloaded}, counted as {@code overload}) and never queued. The legacy HMAC check does not
 * ask for a permit.
 */
@Component
public class PasswordCheckLimit {

	private final Semaphore permits;

	private final Metrics metrics;

	@Autowired
	public PasswordCheckLimit(Settings settings, Metrics metrics) {
		this(settings.maxPasswordChecks(), metrics);
	}

	PasswordCheckLimit(int permits, Metrics metrics) {
		this.permits = new Semaphore(permits);
		this.metrics = metrics;
	}

	/**
	 * A permit for one argon2id check, held until it is closed (try-with-resources around the check, so that a failure
	 * gives it back too). Throws {@link Overloaded} when none is free.
	 */
	public Permit acquire() {
		if (!this.permits.tryAcquire()) {
			this.metrics.rejection(Rejection.OVERLOAD);
			throw new Overloaded();
		}
		return new Permit();
	}

	/** Permits free now. */
	public int available() {
		return this.permits.availablePermits();
	}

	/** One admitted check; closing it more than once gives the permit back once. */
	public final class Permit implements AutoCloseable {

		private final AtomicBoolean held = new AtomicBoolean(true);

		private Permit() {
		}

		@Override
		public void close() {
			if (this.held.compareAndSet(true, false)) {
				PasswordCheckLimit.this.permits.release();
			}
		}

	}

}
