package io.simpleauth.token;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.simpleauth.SimpleAuthApplication;
import io.simpleauth.config.NativeCrypto;
import io.simpleauth.config.Settings;
import io.simpleauth.metrics.Metrics;
import io.simpleauth.user.User;

/**
 * The stack's own signing ceiling: how many token pairs the service's {@link TokenSigner} mints per second on
 * one thread, with the service's settings, key and crypto provider, but without Spring, a port or the database.
 * The benchmark compares it with the server's CPU time per request. A benchmark tool, not part of the service: it
 * lives in the test sources (compiled by {@code mvn package} too, never packed into the jar) and runs on the test
 * classes plus the service's jar.
 *
 * <p>
 * {@code java -cp target/test-classes:target/extracted/simple-auth-spring.jar io.simpleauth.token.SignBench <seconds>},
 * with the service's environment: 2 s of warm-up (JIT), then {@code <seconds>} timed, then one JSON line on stdout:
 * {@code {"token_pairs": n, "seconds": wall, "thread_cpu_seconds": cpu, "provider": "..."}}, the provider that signs
 * the key's algorithm (RS256, ES256 or EdDSA: the key decides). Anything else goes to
 * stderr. Invalid settings or a bad argument: one line on stderr, exit 2.
 */
public final class SignBench {

	static final double WARM_UP_SECONDS = 2;

	static final String USAGE = "usage: SignBench <seconds> (a positive number, e.g. 5 or 0.5)";

	/** John Doe of sql/seed.sql: the same claims as a real login, nothing read from the database. */
	static final User SAMPLE_USER = new User(UUID.fromString("953b48eb-02ef-f93e-f582-e9b9ce4685b5"), "johndoe",
			"John Doe", "john@example.com", "unused");

	/** Plain decimal, optionally with an exponent: no hex floats, no "NaN", no "5d". */
	private static final Pattern NUMBER = Pattern.compile("[+]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?");

	private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

	private SignBench() {
	}

	public static void main(String[] args) {
		// stdout carries the one result line; whatever else writes to it (a library's logging) goes to stderr.
		PrintStream result = System.out;
		System.setOut(System.err);

		double seconds;
		try {
			seconds = parseSeconds(args);
		}
		catch (IllegalArgumentException ex) {
			System.err.println(USAGE);
			System.exit(2);
			return;
		}
		if (!THREADS.isCurrentThreadCpuTimeSupported()) {
			System.err.println("SignBench: this JVM cannot measure thread CPU time");
			System.exit(1);
			return;
		}
		Settings settings = SimpleAuthApplication.settingsOrExit();
		KeySet keys = SimpleAuthApplication.keysOrExit(settings);
		// The service's beans, built by hand: the key set's encoder behind KeyRing and the TokenSigner POST /token
		// uses, recording into a Prometheus registry as the service's does.
		Metrics metrics = new Metrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
		TokenSigner signer = new TokenSigner(new KeyRing(keys, settings, metrics), settings, metrics);
		Supplier<TokenPair> issue = () -> signer.issue(SAMPLE_USER, settings.defaultClientId());

		measure(issue, WARM_UP_SECONDS);
		Result measured = measure(issue, seconds);
		// The provider the signer's Signature.getInstance gets for the key's algorithm (SHA256withRSA,
		// SHA256withECDSAinP1363Format or Ed25519).
		result.println(measured.toJson(NativeCrypto.signatureProvider(keys.algorithm().jcaSignature())));
		result.flush();
		System.exit(result.checkError() ? 1 : 0);
	}

	/** The one argument: a positive, finite number of seconds. */
	static double parseSeconds(String[] args) {
		if (args.length != 1 || !NUMBER.matcher(args[0]).matches()) {
			throw new IllegalArgumentException(USAGE);
		}
		double seconds = Double.parseDouble(args[0]);
		if (!Double.isFinite(seconds) || seconds <= 0) {
			throw new IllegalArgumentException(USAGE);
		}
		return seconds;
	}

	/**
	 * Issues token pairs on the calling thread for {@code seconds} of wall time (at least one pair). The lengths
	 * of all tokens are added up and returned, so that no pair can be optimised away.
	 */
	static Result measure(Supplier<TokenPair> issue, double seconds) {
		long budget = Math.max(1L, (long) (seconds * 1e9));
		long pairs = 0;
		long chars = 0;
		long cpuStart = THREADS.getCurrentThreadCpuTime();
		long start = System.nanoTime();
		long elapsed;
		do {
			TokenPair pair = issue.get();
			chars += pair.accessToken().length() + pair.idToken().length();
			pairs++;
			elapsed = System.nanoTime() - start;
		}
		while (elapsed < budget);
		long cpu = THREADS.getCurrentThreadCpuTime() - cpuStart;
		return new Result(pairs, elapsed / 1e9, cpu / 1e9, chars);
	}

	/** One run: pairs made, its wall and thread CPU time, and the total length of the tokens made. */
	record Result(long tokenPairs, double seconds, double threadCpuSeconds, long tokenChars) {

		String toJson(String provider) {
			return String.format(Locale.ROOT, "{\"token_pairs\": %d, \"seconds\": %.6f, \"thread_cpu_seconds\": %.6f, \"provider\": \"%s\"}",
					this.tokenPairs, this.seconds, this.threadCpuSeconds, jsonEscape(provider));
		}

		private static String jsonEscape(String s) {
			StringBuilder out = new StringBuilder(s.length());
			for (char c : s.toCharArray()) {
				if (c == '"' || c == '\\') {
					out.append('\\').append(c);
				}
				else if (c < 0x20) {
					out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
				}
				else {
					out.append(c);
				}
			}
			return out.toString();
		}

	}

}
