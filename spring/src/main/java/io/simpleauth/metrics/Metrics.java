package io.simpleauth.metrics;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import org.springframework.stereotype.Component;

/**
 * The service's own meters (the contract's metrics), registered once at start so that recording on the request path
 * is a field read (or one map lookup) and an atomic add: no tag lists, no registry lookups. The Prometheus names follow
 * from Micrometer's naming convention ({@code simpleauth.token.requests} → {@code simpleauth_token_requests_total}, a
 * timer → {@code _seconds} histogram). Every label combination the contract names is registered up front (the answers
 * of POST /token by the web layer, which owns their codes), so each series is exported from 0 (Prometheus' advice for
 * known label values) rather than appearing with its first event.
 */
@Component
public class Metrics {

	/** The error label of a 200. */
	public static final String NO_ERROR = "none";

	/** Buckets of {@code simpleauth_token_request_duration_seconds}, in seconds (+Inf is implicit). */
	static final double[] REQUEST_BUCKETS = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5 };

	/** Buckets of {@code simpleauth_token_signing_duration_seconds}, in seconds (+Inf is implicit). */
	static final double[] SIGNING_BUCKETS = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1 };

	/** The scheme label of a password check. */
	public enum Scheme {

		ARGON2ID("argon2id"), HMAC_SHA256("hmac-sha256"), DUMMY("dummy"), UNKNOWN("unknown");

		final String label;

		Scheme(String label) {
			this.label = label;
		}

	}

	/** The result label of a password check. */
	public enum Result {

		MATCH("match"), MISMATCH("mismatch"), UNUSABLE("unusable");

		final String label;

		Result(String label) {
			this.label = label;
		}

	}

	/** The reason label of {@code simpleauth_rejections_total} (spec/README §7, §8). */
	public enum Rejection {

		USERNAME_LOCKED("username_locked"), ADDRESS_LOCKED("address_locked"), OVERLOAD("overload"),
		REFRESH_REUSE("refresh_reuse");

		final String label;

		Rejection(String label) {
			this.label = label;
		}

	}

	private final MeterRegistry registry;

	private final Timer requestDuration;

	private final Timer signingDuration;

	/** simpleauth_token_requests_total by "status error"; the web layer registers the rows it can answer up front. */
	private final Map<String, Counter> tokenRequests = new ConcurrentHashMap<>();

	/** Its series of a 200, resolved once: every granted token is counted without building a key or a lookup. */
	private final Counter tokensGranted;

	private final Counter[][] passwordChecks = new Counter[Scheme.values().length][Result.values().length];

	private final Counter keyReloadSuccesses;

	private final Counter keyReloadFailures;

	private final Counter[] rejections = new Counter[Rejection.values().length];

	public Metrics(MeterRegistry registry) {
		this.registry = registry;
		this.requestDuration = histogram(registry, "simpleauth.token.request.duration",
				"Time to answer POST /token, every response", REQUEST_BUCKETS);
		this.signingDuration = histogram(registry, "simpleauth.token.signing.duration",
				"Time to sign one token pair (access and ID token)", SIGNING_BUCKETS);
		for (Scheme scheme : Scheme.values()) {
			for (Result result : Result.values()) {
				if (isPossible(scheme, result)) {
					this.passwordChecks[scheme.ordinal()][result.ordinal()] = Counter.builder("simpleauth.password.checks")
						.description("Password verifications by scheme and result (dummy: the unknown-user equaliser)")
						.tag("scheme", scheme.label)
						.tag("result", result.label)
						.register(registry);
				}
			}
		}
		this.tokensGranted = tokenRequests(200, NO_ERROR);
		this.keyReloadSuccesses = keyReloads(registry, "success");
		this.keyReloadFailures = keyReloads(registry, "failure");
		for (Rejection reason : Rejection.values()) {
			this.rejections[reason.ordinal()] = Counter.builder("simpleauth.rejections")
				.description("Requests refused by a limit (429 of a lock, 503 of the overload limit) and refresh-token "
						+ "families revoked for reuse")
				.tag("reason", reason.label)
				.register(registry);
		}
	}

	/**
	 * Registers the series of one answer POST /token can give (status, and the OAuth error code or {@value #NO_ERROR}),
	 * so that it is exported from 0 rather than appearing with its first request.
	 */
	public void expectTokenRequests(int status, String error) {
		tokenRequests(status, error);
	}

	/** One response to POST /token: its status, its OAuth error code ({@value #NO_ERROR} for a 200) and how long it took. */
	public void tokenRequest(int status, String error, long nanos) {
		(status == 200 && NO_ERROR.equals(error) ? this.tokensGranted : tokenRequests(status, error)).increment();
		this.requestDuration.record(nanos, TimeUnit.NANOSECONDS);
	}

	/** One password verification. */
	public void passwordCheck(Scheme scheme, Result result) {
		Counter counter = this.passwordChecks[scheme.ordinal()][result.ordinal()];
		if (counter == null) { // a combination the verifier does not produce; counted all the same
			counter = Counter.builder("simpleauth.password.checks")
				.tag("scheme", scheme.label)
				.tag("result", result.label)
				.register(this.registry);
		}
		counter.increment();
	}

	/** One token pair signed. */
	public void tokenPairSigned(long nanos) {
		this.signingDuration.record(nanos, TimeUnit.NANOSECONDS);
	}

	/** One SIGHUP reload of the keys: the new keys are in service ({@code success}) or the old ones stay ({@code failure}). */
	public void keyReload(boolean success) {
		(success ? this.keyReloadSuccesses : this.keyReloadFailures).increment();
	}

	/** One request refused by a lock or the overload limit, or one family revoked for the reuse of a refresh token. */
	public void rejection(Rejection reason) {
		this.rejections[reason.ordinal()].increment();
	}

	private static Counter keyReloads(MeterRegistry registry, String result) {
		return Counter.builder("simpleauth.key.reloads")
			.description("SIGHUP reloads of the signing key and JWT_PUBLIC_KEYS_FILE by result")
			.tag("result", result)
			.register(registry);
	}

	private Counter tokenRequests(int status, String error) {
		return this.tokenRequests.computeIfAbsent(status + " " + error, key -> Counter.builder("simpleauth.token.requests")
			.description("Responses to POST /token by status and OAuth error code")
			.tag("status", Integer.toString(status))
			.tag("error", error)
			.register(this.registry));
	}

	private static boolean isPossible(Scheme scheme, Result result) {
		return switch (scheme) {
			case ARGON2ID, HMAC_SHA256 -> true;
			case DUMMY -> result == Result.MISMATCH;
			case UNKNOWN -> result == Result.UNUSABLE;
		};
	}

	private static Timer histogram(MeterRegistry registry, String name, String description, double[] bucketsSeconds) {
		Duration[] slos = new Duration[bucketsSeconds.length];
		for (int i = 0; i < slos.length; i++) {
			slos[i] = Duration.ofNanos(Math.round(bucketsSeconds[i] * 1e9));
		}
		return Timer.builder(name).description(description).serviceLevelObjectives(slos).register(registry);
	}

}
