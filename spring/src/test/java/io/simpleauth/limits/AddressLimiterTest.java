package io.simpleauth.limits;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.simpleauth.metrics.Metrics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The per-address limit: attempts reserved in a fixed window from the first, refused at the limit with nothing reserved,
 * given back, expiry, the /64 key of IPv6, the table's bound and its sweep.
 */
class AddressLimiterTest {

	private final AtomicLong now = new AtomicLong(1_000_000_000_000L);

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	/** 3 attempts within 60 s lock; room for 4 keys. */
	private final AddressLimiter limit = new AddressLimiter(3, 60, 4, this.now::get, new Metrics(this.registry));

	private final InetAddress guesser = address(1);

	@Test
	void belowTheLimitEveryAttemptIsReserved() {
		reserve(this.guesser, 3);
		assertThat(addressLocked()).isZero();
	}

	@Test
	void atTheLimitTheAddressIsLockedWithTheWindowsRemainingSecondsRoundedUp() {
		for (int i = 0; i < 3; i++) {
			this.limit.reserve(this.guesser);
			advance(TimeUnit.MILLISECONDS.toNanos(10_100));
		}
		// 30.3 s into the window: 29.7 s remain, answered as 30.
		assertThatThrownBy(() -> this.limit.reserve(this.guesser)).isInstanceOf(TooManyFailedLogins.class)
			.extracting(e -> ((TooManyFailedLogins) e).retryAfterSeconds())
			.isEqualTo(30L);
		assertThat(addressLocked()).isEqualTo(1);
		assertThatCode(() -> this.limit.reserve(address(2))).as("other addresses").doesNotThrowAnyException();
	}

	@Test
	void aRefusedAttemptReservesNothing() {
		AddressLimiter.Reservation first = this.limit.reserve(this.guesser);
		reserve(this.guesser, 2);
		for (int i = 0; i < 5; i++) {
			assertThatThrownBy(() -> this.limit.reserve(this.guesser)).isInstanceOf(TooManyFailedLogins.class);
		}
		this.limit.release(first);
		assertThatCode(() -> this.limit.reserve(this.guesser)).as("one given back: one more, not six")
			.doesNotThrowAnyException();
		assertThatThrownBy(() -> this.limit.reserve(this.guesser)).isInstanceOf(TooManyFailedLogins.class);
	}

	@Test
	void attemptsGivenBackAreNotCounted() {
		for (int i = 0; i < 10; i++) {
			this.limit.release(this.limit.reserve(this.guesser));
		}
		assertThat(this.limit.size()).as("a window left with no attempt is removed").isZero();
		reserve(this.guesser, 3);
		assertThatThrownBy(() -> this.limit.reserve(this.guesser)).isInstanceOf(TooManyFailedLogins.class);
	}

	@Test
	void aReservationOfAnExpiredWindowIsNotGivenBackToTheNextOne() {
		AddressLimiter.Reservation old = this.limit.reserve(this.guesser);
		advance(TimeUnit.SECONDS.toNanos(60));
		reserve(this.guesser, 3);
		this.limit.release(old);
		assertThatThrownBy(() -> this.limit.reserve(this.guesser)).isInstanceOf(TooManyFailedLogins.class);
	}

	@Test
	void concurrentAttemptsReserveAtMostTheLimit() throws Exception {
		AddressLimiter wide = new AddressLimiter(10, 60, 4, this.now::get, new Metrics(this.registry));
		java.util.concurrent.atomic.AtomicInteger reserved = new java.util.concurrent.atomic.AtomicInteger();
		try (var pool = java.util.concurrent.Executors.newFixedThreadPool(8)) {
			var latch = new java.util.concurrent.CountDownLatch(1);
			for (int i = 0; i < 80; i++) {
				pool.submit(() -> {
					latch.await();
					try {
						wide.reserve(this.guesser);
						reserved.incrementAndGet();
					}
					catch (TooManyFailedLogins ex) {
						// refused
					}
					return null;
				});
			}
			latch.countDown();
		}
		assertThat(reserved.get()).isEqualTo(10);
		assertThat(addressLocked()).isEqualTo(70);
	}

	@Test
	void theLastFractionOfASecondIsStillOneSecond() {
		reserve(this.guesser, 3);
		advance(TimeUnit.SECONDS.toNanos(60) - 1);
		assertThatThrownBy(() -> this.limit.reserve(this.guesser)).isInstanceOf(TooManyFailedLogins.class)
			.extracting(e -> ((TooManyFailedLogins) e).retryAfterSeconds())
			.isEqualTo(1L);
	}

	@Test
	void theWindowIsFixedFromTheFirstAttemptAndExpires() {
		this.limit.reserve(this.guesser);
		advance(TimeUnit.SECONDS.toNanos(59));
		reserve(this.guesser, 2);
		assertThatThrownBy(() -> this.limit.reserve(this.guesser)).isInstanceOf(TooManyFailedLogins.class)
			.extracting(e -> ((TooManyFailedLogins) e).retryAfterSeconds())
			.as("not extended by later attempts")
			.isEqualTo(1L);
		advance(TimeUnit.SECONDS.toNanos(1));
		reserve(this.guesser, 3);
		assertThatThrownBy(() -> this.limit.reserve(this.guesser)).as("a new window counts from 1")
			.isInstanceOf(TooManyFailedLogins.class);
	}

	@Test
	void noAddressIsNeverTracked() {
		AddressLimiter.Reservation none = this.limit.reserve(null);
		assertThat(none).isSameAs(AddressLimiter.Reservation.NONE);
		this.limit.release(none);
		assertThat(this.limit.size()).isZero();
	}

	/** IPv4 by address, IPv6 by its /64 (IPv4-mapped IPv6 as IPv4). */
	@ParameterizedTest(name = "{0} -> {1}")
	@CsvSource({ "192.0.2.1, 192.0.2.1", "::ffff:192.0.2.1, 192.0.2.1", "2001:db8:1:2:3:4:5:6, 2001:db8:1:2::",
			"2001:db8:1:2::, 2001:db8:1:2::", "2001:db8:1:2:ffff:ffff:ffff:ffff, 2001:db8:1:2::", "::1, ::",
			"fe80::1, fe80::" })
	void theKey(String address, String key) throws Exception {
		assertThat(AddressLimiter.key(InetAddress.getByName(address))).isEqualTo(InetAddress.getByName(key));
	}

	@Test
	void oneIpv6Slash64IsOneClient() throws Exception {
		reserve(InetAddress.getByName("2001:db8:1:2::1"), 1);
		reserve(InetAddress.getByName("2001:db8:1:2::2"), 1);
		reserve(InetAddress.getByName("2001:db8:1:2:abcd::3"), 1);
		assertThatThrownBy(() -> this.limit.reserve(InetAddress.getByName("2001:db8:1:2:ffff::9")))
			.isInstanceOf(TooManyFailedLogins.class);
		assertThatCode(() -> this.limit.reserve(InetAddress.getByName("2001:db8:1:3::1"))).as("the next /64")
			.doesNotThrowAnyException();
		assertThat(this.limit.size()).isEqualTo(2);
	}

	@Test
	void aFullTableSweepsExpiredWindowsAndOtherwiseTracksNoMore() {
		for (int i = 1; i <= 4; i++) {
			this.limit.reserve(address(i));
		}
		assertThat(this.limit.size()).isEqualTo(4);
		for (int i = 0; i < 5; i++) {
			assertThat(this.limit.reserve(address(5))).isSameAs(AddressLimiter.Reservation.NONE);
		}
		assertThat(this.limit.size()).as("full of live windows: not tracked").isEqualTo(4);
		reserve(address(1), 2);
		assertThatThrownBy(() -> this.limit.reserve(address(1))).as("tracked addresses still count")
			.isInstanceOf(TooManyFailedLogins.class);

		advance(TimeUnit.SECONDS.toNanos(61));
		this.limit.reserve(address(5));
		assertThat(this.limit.size()).as("the expired windows swept, the new address in").isEqualTo(1);

	}

	@Test
	void aSweepRunsAtMostOnceASecond() {
		this.limit.reserve(address(1));
		advance(TimeUnit.MILLISECONDS.toNanos(400));
		for (int i = 2; i <= 4; i++) {
			this.limit.reserve(address(i));
		}
		advance(TimeUnit.MILLISECONDS.toNanos(59_800)); // 60.2 s: address 1's window has passed, the others' not
		assertThat(this.limit.reserve(address(5))).as("a sweep makes room").isNotSameAs(AddressLimiter.Reservation.NONE);
		assertThat(this.limit.size()).isEqualTo(4);
		advance(TimeUnit.MILLISECONDS.toNanos(300)); // 60.5 s: addresses 2-4 have passed too
		assertThat(this.limit.reserve(address(6))).as("the last sweep ran 0.3 s ago: none now, not tracked")
			.isSameAs(AddressLimiter.Reservation.NONE);
		assertThat(this.limit.size()).isEqualTo(4);
		advance(TimeUnit.MILLISECONDS.toNanos(700)); // a second after the last sweep
		assertThat(this.limit.reserve(address(6))).isNotSameAs(AddressLimiter.Reservation.NONE);
		assertThat(this.limit.size()).isEqualTo(2);
	}

	@Test
	void theServicesBoundIsAHundredThousandAddresses() {
		assertThat(AddressLimiter.MAX_ADDRESSES).isEqualTo(100_000);
	}

	private void reserve(InetAddress address, int times) {
		for (int i = 0; i < times; i++) {
			assertThat(this.limit.reserve(address)).isNotSameAs(AddressLimiter.Reservation.NONE);
		}
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
