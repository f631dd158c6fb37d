package io.simpleauth.limits;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.simpleauth.metrics.Metrics;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The per-address limit: a fixed window from the first failure, the lock at the limit, expiry, the table's bound. */
class AddressLimiterTest {

	private final AtomicLong now = new AtomicLong(1_000_000_000_000L);

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	/** 3 failures within 60 s lock; room for 4 addresses. */
	private final AddressLimiter limit = new AddressLimiter(3, 60, 4, this.now::get, new Metrics(this.registry));

	private final InetAddress guesser = address(1);

	@Test
	void belowTheLimitNothingIsRefused() {
		this.limit.failed(this.guesser);
		this.limit.failed(this.guesser);
		assertThatCode(() -> this.limit.check(this.guesser)).doesNotThrowAnyException();
		assertThat(addressLocked()).isZero();
	}

	@Test
	void atTheLimitTheAddressIsLockedWithTheWindowsRemainingSecondsRoundedUp() {
		for (int i = 0; i < 3; i++) {
			this.limit.failed(this.guesser);
			advance(TimeUnit.MILLISECONDS.toNanos(10_100));
		}
		// 30.3 s into the window: 29.7 s remain, answered as 30.
		assertThatThrownBy(() -> this.limit.check(this.guesser)).isInstanceOf(TooManyFailedLogins.class)
			.extracting(e -> ((TooManyFailedLogins) e).retryAfterSeconds())
			.isEqualTo(30L);
		assertThat(addressLocked()).isEqualTo(1);
		assertThatCode(() -> this.limit.check(address(2))).as("other addresses").doesNotThrowAnyException();
	}

	@Test
	void theLastFractionOfASecondIsStillOneSecond() {
		for (int i = 0; i < 3; i++) {
			this.limit.failed(this.guesser);
		}
		advance(TimeUnit.SECONDS.toNanos(60) - 1);
		assertThatThrownBy(() -> this.limit.check(this.guesser)).isInstanceOf(TooManyFailedLogins.class)
			.extracting(e -> ((TooManyFailedLogins) e).retryAfterSeconds())
			.isEqualTo(1L);
	}

	@Test
	void theWindowIsFixedFromTheFirstFailureAndExpires() {
		this.limit.failed(this.guesser);
		advance(TimeUnit.SECONDS.toNanos(59));
		this.limit.failed(this.guesser);
		this.limit.failed(this.guesser);
		assertThatThrownBy(() -> this.limit.check(this.guesser)).isInstanceOf(TooManyFailedLogins.class)
			.extracting(e -> ((TooManyFailedLogins) e).retryAfterSeconds())
			.as("not extended by later failures")
			.isEqualTo(1L);
		advance(TimeUnit.SECONDS.toNanos(1));
		assertThatCode(() -> this.limit.check(this.guesser)).as("the window has passed").doesNotThrowAnyException();
		this.limit.failed(this.guesser);
		this.limit.failed(this.guesser);
		assertThatCode(() -> this.limit.check(this.guesser)).as("a new window counts from 1")
			.doesNotThrowAnyException();
	}

	@Test
	void noAddressIsNeverTracked() {
		this.limit.failed(null);
		assertThatCode(() -> this.limit.check(null)).doesNotThrowAnyException();
		assertThat(this.limit.size()).isZero();
	}

	@Test
	void aFullTableSweepsExpiredWindowsAndOtherwiseTracksNoMore() {
		for (int i = 1; i <= 4; i++) {
			this.limit.failed(address(i));
		}
		assertThat(this.limit.size()).isEqualTo(4);
		for (int i = 0; i < 5; i++) {
			this.limit.failed(address(5));
		}
		assertThat(this.limit.size()).as("full of live windows: not tracked").isEqualTo(4);
		assertThatCode(() -> this.limit.check(address(5))).doesNotThrowAnyException();
		for (int i = 0; i < 3; i++) {
			this.limit.failed(address(1));
		}
		assertThatThrownBy(() -> this.limit.check(address(1))).as("tracked addresses still count")
			.isInstanceOf(TooManyFailedLogins.class);

		advance(TimeUnit.SECONDS.toNanos(61));
		this.limit.failed(address(5));
		assertThat(this.limit.size()).as("the expired windows swept, the new address in").isEqualTo(1);
	}

	@Test
	void theServicesBoundIsAHundredThousandAddresses() {
		assertThat(AddressLimiter.MAX_ADDRESSES).isEqualTo(100_000);
	}

	private void advance(long nanos) {
		this.now.addAndGet(nanos);
	}

	private double addressLocked() {
		return this.registry.get("simpleauth.rejections").tag("reason", "address_locked").counter().count();
	}

	private static InetAddress address(int n) {
		try {
			return InetAddress.getByAddress(new byte[] { (byte) 192, 0, 2, (byte) n });
		}
		catch (UnknownHostException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
