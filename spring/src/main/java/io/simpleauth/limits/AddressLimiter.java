package io.simpleauth.limits;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import io.simpleauth.config.Settings;
import io.simpleauth.config.TrustedProxies;
import io.simpleauth.metrics.Metrics;
import io.simpleauth.metrics.Metrics.Rejection;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * The per-client-address limit of spec/README §8, in memory (per instance). A password grant <em>reserves</em> one
 * attempt for its address before anything else ({@link #reserve}): counted in a fixed window of
 * {@code LOGIN_FAILURE_WINDOW_SECONDS} that starts at the first, refused once the window already holds
 * {@code LOGIN_IP_MAX_FAILURES} (nothing reserved then). The grant gives the attempt back ({@link #release}) when it
 * turns out not to be a failure — a success, a username lock, a database error — so what stays counted are the failed
 * and the shed attempts, and at most {@code LOGIN_IP_MAX_FAILURES} of them are evaluated per window however many
 * arrive at once. The key: an IPv4 address as is, an IPv6 address by its /64. The table holds at most
 * {@value #MAX_ADDRESSES} keys: when it is full, expired windows are swept (at most once a second, so that a full
 * table of live windows does not cost a scan per request) and a key that still finds no room is not tracked.
 * Concurrent first attempts of new keys may overshoot the bound by the number of requests in flight.
 */
@Component
public class AddressLimiter {

	static final int MAX_ADDRESSES = 100_000;

	private static final long SWEEP_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

	/** A window: when its first attempt was (System.nanoTime()), and the attempts reserved since. */
	private record Window(long start, int failures) {

	}

	private final ConcurrentHashMap<InetAddress, Window> windows = new ConcurrentHashMap<>();

	private final int maxFailures;

	private final long windowNanos;

	private final int capacity;

	private final LongSupplier clock;

	private final Metrics metrics;

	private final AtomicLong nextSweep;

	@Autowired
	public AddressLimiter(Settings settings, Metrics metrics) {
		this(settings.loginIpMaxFailures(), settings.loginFailureWindowSeconds(), MAX_ADDRESSES, System::nanoTime,
				metrics);
	}

	AddressLimiter(int maxFailures, int windowSeconds, int capacity, LongSupplier clock, Metrics metrics) {
		this.maxFailures = maxFailures;
		this.windowNanos = TimeUnit.SECONDS.toNanos(windowSeconds);
		this.capacity = capacity;
		this.clock = clock;
		this.metrics = metrics;
		this.nextSweep = new AtomicLong(clock.getAsLong());
	}

	/**
	 * Reserves one attempt for the key of {@code address}; throws {@link TooManyFailedLogins} (counted as
	 * {@code address_locked}) with the window's remaining seconds, rounded up, when its window already holds the limit.
	 * For no address, or one the full table cannot track, nothing is reserved.
	 */
	public Reservation reserve(InetAddress address) {
		if (address == null) {
			return Reservation.NONE;
		}
		InetAddress key = key(address);
		long now = this.clock.getAsLong();
		Window current = this.windows.get(key);
		if (current == null) {
			if (this.windows.size() >= this.capacity && !sweep(now)) {
				return Reservation.NONE; // full of live windows: not tracked
			}
		}
		else if (current.failures() >= this.maxFailures && now - current.start() < this.windowNanos) {
			// Locked: refused without taking the entry's lock, which a flood from one address would queue on (a
			// refusal reserves nothing, so a read is enough).
			throw locked(current, now);
		}
		boolean[] locked = { false };
		Window reserved = this.windows.compute(key, (k, window) -> {
			if (window == null || now - window.start() >= this.windowNanos) {
				return new Window(now, 1);
			}
			if (window.failures() >= this.maxFailures) {
				locked[0] = true;
				return window;
			}
			return new Window(window.start(), window.failures() + 1);
		});
		if (locked[0]) {
			throw locked(reserved, now);
		}
		return new Reservation(key, reserved.start());
	}

	/** The refusal of a locked window (counted as {@code address_locked}): its remaining seconds, rounded up. */
	private TooManyFailedLogins locked(Window window, long now) {
		this.metrics.rejection(Rejection.ADDRESS_LOCKED);
		long remaining = this.windowNanos - (now - window.start());
		long second = TimeUnit.SECONDS.toNanos(1);
		return new TooManyFailedLogins((remaining + second - 1) / second);
	}

	/**
	 * Gives a reserved attempt back, if its window is still the current one; a window left with no attempt is removed.
	 */
	public void release(Reservation reservation) {
		if (reservation == null || reservation.key() == null) {
			return;
		}
		this.windows.computeIfPresent(reservation.key(), (key, window) -> {
			if (window.start() != reservation.windowStart()) {
				return window;
			}
			return window.failures() <= 1 ? null : new Window(window.start(), window.failures() - 1);
		});
	}

	/** The limit's key of an address: IPv4 as is (IPv4-mapped IPv6 too), IPv6 by its /64 (the rest zeroed). */
	public static InetAddress key(InetAddress address) {
		InetAddress normalised = TrustedProxies.normalised(address);
		if (!(normalised instanceof Inet6Address)) {
			return normalised;
		}
		byte[] bytes = Arrays.copyOf(normalised.getAddress(), 16);
		Arrays.fill(bytes, 8, 16, (byte) 0);
		try {
			return InetAddress.getByAddress(bytes);
		}
		catch (UnknownHostException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** An attempt reserved for a key in the window that started at {@code windowStart}; {@link #NONE}: nothing. */
	public record Reservation(InetAddress key, long windowStart) {

		public static final Reservation NONE = new Reservation(null, 0);

	}

	/** Addresses tracked now. */
	int size() {
		return this.windows.size();
	}

	/** Removes the expired windows if no sweep ran in the last second; returns whether there is room now. */
	private boolean sweep(long now) {
		long next = this.nextSweep.get();
		if (now - next >= 0 && this.nextSweep.compareAndSet(next, now + SWEEP_INTERVAL_NANOS)) {
			this.windows.values().removeIf(window -> now - window.start() >= this.windowNanos);
		}
		return this.windows.size() < this.capacity;
	}

}
