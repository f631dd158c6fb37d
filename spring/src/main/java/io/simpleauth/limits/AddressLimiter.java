package io.simpleauth.limits;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import io.simpleauth.config.Settings;
import io.simpleauth.metrics.Metrics;
import io.simpleauth.metrics.Metrics.Rejection;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * The per-client-address limit of spec/README §8, in memory (per instance): each failed password grant counts one
 * failure for its address in a fixed window of {@code LOGIN_FAILURE_WINDOW_SECONDS} that starts at the first; once the
 * count reaches {@code LOGIN_IP_MAX_FAILURES}, password grants from that address are refused until the window has
 * passed. A success does not clear it. The table holds at most {@value #MAX_ADDRESSES} addresses: when it is full,
 * expired windows are swept (at most once a second, so that a full table of live windows does not cost a scan per
 * failure) and an address that still finds no room is not tracked. Concurrent first failures of new addresses may
 * overshoot the bound by the number of requests in flight.
 */
@Component
public class AddressLimiter {

	static final int MAX_ADDRESSES = 100_000;

	private static final long SWEEP_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

	/** A window: when its first failure was (System.nanoTime()), and the failures since. */
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
	 * Throws {@link TooManyFailedLogins} (counted as {@code address_locked}) with the window's remaining seconds, rounded
	 * up, when {@code address} has reached the limit; does nothing otherwise, or for no address.
	 */
	public void check(InetAddress address) {
		if (address == null) {
			return;
		}
		Window window = this.windows.get(address);
		if (window == null || window.failures() < this.maxFailures) {
			return;
		}
		long remaining = this.windowNanos - (this.clock.getAsLong() - window.start());
		if (remaining <= 0) {
			return;
		}
		this.metrics.rejection(Rejection.ADDRESS_LOCKED);
		throw new TooManyFailedLogins((remaining + TimeUnit.SECONDS.toNanos(1) - 1) / TimeUnit.SECONDS.toNanos(1));
	}

	/** One failed password grant from {@code address}: counted in its window, or a new window from now. */
	public void failed(InetAddress address) {
		if (address == null) {
			return;
		}
		long now = this.clock.getAsLong();
		if (!this.windows.containsKey(address) && this.windows.size() >= this.capacity && !sweep(now)) {
			return; // full of live windows: not tracked
		}
		this.windows.compute(address, (key, window) -> {
			if (window == null || now - window.start() >= this.windowNanos) {
				return new Window(now, 1);
			}
			return window.failures() >= this.maxFailures ? window : new Window(window.start(), window.failures() + 1);
		});
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
