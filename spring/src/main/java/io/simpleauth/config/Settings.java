package io.simpleauth.config;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import io.simpleauth.password.Argon2Memory;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.context.properties.bind.Name;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.convert.support.GenericConversionService;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Every environment variable of the contract (spec/README §5), bound by Spring Boot's {@link Binder} — the engine of
 * {@code @ConfigurationProperties}, with its relaxed names: {@code db-pool-size} is {@code DB_POOL_SIZE} — and then
 * validated. It is bound in {@code main} before the context starts, so that a refused setting is one
 * line on stderr and exit 2 (see SimpleAuthApplication) rather than a context failure report, and so that
 * {@code signbench} reads exactly the same settings without Spring. A blank variable counts as unset.
 */
@ConfigurationProperties
public record Settings(@DefaultValue("0.0.0.0") String host, @DefaultValue("8080") int port,
		@Name("database-url") @DefaultValue(Settings.DEFAULT_DATABASE_URL) DatabaseSettings database,
		@Name("db-pool-size") @DefaultValue("10") int poolSize,
		@Name("db-acquire-timeout-ms") @DefaultValue("1000") long acquireTimeoutMs,
		@Name("db-max-lifetime-seconds") @DefaultValue("600") int maxLifetimeSeconds,
		@Name("db-idle-timeout-seconds") @DefaultValue("300") int idleTimeoutSeconds,
		@Name("jwt-issuer") @DefaultValue("http://localhost:8080") String issuer,
		@Name("jwt-audience") @DefaultValue("channel-api") String audience,
		@Name("token-ttl-seconds") @DefaultValue("600") long tokenTtlSeconds,
		@Name("log-level") @DefaultValue("info") LogLevel logLevel, @Name("jwt-private-key-file") String privateKeyFile,
		@Name("jwt-private-key") String privateKey, @Name("jwt-public-keys-file") String publicKeysFile,
		@Name("default-client-id") @DefaultValue("public") String defaultClientId,
		@Name("refresh-ttl-seconds") @DefaultValue("2592000") int refreshTtlSeconds,
		@Name("login-max-failures") @DefaultValue("10") int loginMaxFailures,
		@Name("login-failure-window-seconds") @DefaultValue("300") int loginFailureWindowSeconds,
		@Name("login-ip-max-failures") @DefaultValue("100") int loginIpMaxFailures,
		@Name("trusted-proxies") String trustedProxies,
		@Name("refresh-max-lifetime-seconds") @DefaultValue("7776000") int refreshMaxLifetimeSeconds,
		@Name("metrics-port") @DefaultValue("9091") int metricsPort,
		@Name("max-password-checks") int maxPasswordChecks) {

	public static final String DEFAULT_DATABASE_URL = "postgres://auth:auth@127.0.0.1:5432/auth";

	/** LOG_LEVEL, in any case. */
	public enum LogLevel {

		ERROR, WARN, INFO, DEBUG, TRACE

	}

	/**
	 * The accepted range of each number, by property name. The limits of spec/README §7 and §8 are positive integers that
	 * the SQL statements pass as PostgreSQL {@code integer}s. The pool's lifetime and idle timeout start at HikariCP's
	 * own minimums (30 s and 10 s), which the contract takes for every stack (§5).
	 */
	private static final Map<String, long[]> RANGES = Map.ofEntries(Map.entry("port", new long[] { 0, 65535 }),
			Map.entry("metrics-port", new long[] { 1, 65535 }), positive("refresh-max-lifetime-seconds"),
			Map.entry("db-pool-size", new long[] { 1, 1000 }), Map.entry("db-acquire-timeout-ms", new long[] { 1, 600_000 }),
			Map.entry("db-max-lifetime-seconds", new long[] { 30, Integer.MAX_VALUE }),
			Map.entry("db-idle-timeout-seconds", new long[] { 10, Integer.MAX_VALUE }),
			Map.entry("token-ttl-seconds", new long[] { 1, 31_536_000 }), positive("refresh-ttl-seconds"),
			positive("login-max-failures"), positive("login-failure-window-seconds"), positive("login-ip-max-failures"),
			positive("max-password-checks"));

	private static Map.Entry<String, long[]> positive(String property) {
		return Map.entry(property, new long[] { 1, Integer.MAX_VALUE });
	}

	public static Settings fromEnvironment(Map<String, String> env) {
		return fromEnvironment(env, Argon2Memory.checksAtOnce());
	}

	/**
	 * The settings of a process that runs {@code checksAtOnce} argon2id checks at once. MAX_PASSWORD_CHECKS unset is 4
	 * × those (spec/README.md §8): one per core, fewer where the heap bounds them ({@link Argon2Memory#checksAtOnce()}:
	 * one on the 96 MiB heap), so that the wait behind the admitted checks stays at about four argon2id times.
	 */
	static Settings fromEnvironment(Map<String, String> env, int checksAtOnce) {
		Map<String, Object> set = new HashMap<>();
		env.forEach((name, value) -> {
			if (value != null && !value.isBlank()) {
				set.put(name, value.trim());
			}
		});
		set.putIfAbsent("MAX_PASSWORD_CHECKS", String.valueOf(4 * checksAtOnce));
		// Named like the JVM's own environment source, so that the Binder maps variable names as it does for it.
		var source = new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, set);
		GenericConversionService conversions = new GenericConversionService();
		conversions.addConverter(String.class, DatabaseSettings.class, DatabaseSettings::fromUrl);
		if (source.getProperty("trust-proxy-headers") != null) {
			// An old configuration must not silently change meaning (spec/README §5).
			throw new SettingsException("TRUST_PROXY_HEADERS was replaced by TRUSTED_PROXIES (the proxies' addresses or "
					+ "CIDR ranges whose X-Forwarded-For is believed); unset it");
		}
		Settings settings;
		try {
			settings = new Binder(ConfigurationPropertySources.from(source), null, conversions).bindOrCreate("",
					Bindable.of(Settings.class));
		}
		catch (BindException ex) {
			throw refusal(ex);
		}
		within("port", settings.port);
		within("metrics-port", settings.metricsPort);
		if (settings.metricsPort == settings.port) {
			throw new SettingsException("METRICS_PORT must differ from PORT (both are " + settings.port + ")");
		}
		within("db-pool-size", settings.poolSize);
		within("db-acquire-timeout-ms", settings.acquireTimeoutMs);
		within("db-max-lifetime-seconds", settings.maxLifetimeSeconds);
		within("db-idle-timeout-seconds", settings.idleTimeoutSeconds);
		// HikariCP would switch the idle timeout off rather than refuse it (§5: refused at start).
		if (settings.idleTimeoutSeconds >= settings.maxLifetimeSeconds) {
			throw new SettingsException("DB_IDLE_TIMEOUT_SECONDS must be less than DB_MAX_LIFETIME_SECONDS (got "
					+ settings.idleTimeoutSeconds + " and " + settings.maxLifetimeSeconds + ")");
		}
		within("token-ttl-seconds", settings.tokenTtlSeconds);
		within("refresh-ttl-seconds", settings.refreshTtlSeconds);
		within("refresh-max-lifetime-seconds", settings.refreshMaxLifetimeSeconds);
		if (settings.refreshMaxLifetimeSeconds < settings.refreshTtlSeconds) {
			throw new SettingsException("REFRESH_MAX_LIFETIME_SECONDS must not be less than REFRESH_TTL_SECONDS (got "
					+ settings.refreshMaxLifetimeSeconds + " and " + settings.refreshTtlSeconds + ")");
		}
		within("login-max-failures", settings.loginMaxFailures);
		within("login-failure-window-seconds", settings.loginFailureWindowSeconds);
		within("login-ip-max-failures", settings.loginIpMaxFailures);
		within("max-password-checks", settings.maxPasswordChecks);
		checkIssuer(settings.issuer);
		TrustedProxies.parse(settings.trustedProxies);
		if (!ClientId.isValid(settings.defaultClientId)) {
			throw new SettingsException("DEFAULT_CLIENT_ID must be " + ClientId.RULE + " (got "
					+ settings.defaultClientId.length() + " characters)");
		}
		return settings;
	}

	/**
	 * JWT_ISSUER is {@code iss} and the base of the discovery document's URLs: an absolute http or https URL with a host
	 * and no query or fragment (spec/README §5).
	 */
	private static void checkIssuer(String issuer) {
		URI uri;
		try {
			uri = new URI(issuer);
		}
		catch (URISyntaxException ex) {
			uri = null;
		}
		boolean http = uri != null && uri.getScheme() != null
				&& ("http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme()));
		if (!http || uri.getHost() == null || uri.getRawQuery() != null || uri.getRawFragment() != null) {
			throw new SettingsException("JWT_ISSUER must be an absolute http or https URL with a host and no query or "
					+ "fragment (got '" + issuer.replaceAll("\\p{Cntrl}", "?") + "')");
		}
	}

	/** A value the Binder could not convert: DATABASE_URL's own refusal, or the variable named with what it takes. */
	private static SettingsException refusal(BindException ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof SettingsException refused) {
				return refused;
			}
		}
		String property = ex.getName().toString();
		String value = ex.getProperty() != null ? String.valueOf(ex.getProperty().getValue()) : "?";
		if (RANGES.containsKey(property)) {
			return outOfRange(property, value); // not a number (PORT=abc): as a number out of range
		}
		if (property.equals("log-level")) {
			return new SettingsException("LOG_LEVEL must be one of error, warn, info, debug (got '" + value + "')");
		}
		return new SettingsException(
				"cannot read the environment: " + NestedExceptionUtils.getMostSpecificCause(ex).getMessage());
	}

	/**
	 * The PEM of the signing key: the file's content if {@code JWT_PRIVATE_KEY_FILE} is set, otherwise the inline
	 * {@code JWT_PRIVATE_KEY}, where a literal two-character {@code \n} is a newline (secret stores flatten PEMs).
	 */
	public String signingKeyPem() {
		if (this.privateKeyFile != null) {
			try {
				return Files.readString(Path.of(this.privateKeyFile), StandardCharsets.US_ASCII);
			}
			catch (IOException | RuntimeException ex) {
				throw new SettingsException("JWT_PRIVATE_KEY_FILE cannot be read: " + this.privateKeyFile + " ("
						+ ex.getClass().getSimpleName() + ")");
			}
		}
		if (this.privateKey != null) {
			return this.privateKey.replace("\\n", "\n");
		}
		throw new SettingsException("no signing key: set JWT_PRIVATE_KEY_FILE or JWT_PRIVATE_KEY (PKCS#8 PEM)");
	}

	/**
	 * The PEM bundle of {@code JWT_PUBLIC_KEYS_FILE}, or null when it is not set. Read as ISO-8859-1, so that text outside
	 * the blocks (which is ignored) can be anything.
	 */
	public String publicKeysPem() {
		if (this.publicKeysFile == null) {
			return null;
		}
		try {
			return Files.readString(Path.of(this.publicKeysFile), StandardCharsets.ISO_8859_1);
		}
		catch (IOException | RuntimeException ex) {
			throw new SettingsException("JWT_PUBLIC_KEYS_FILE cannot be read: " + this.publicKeysFile + " ("
					+ ex.getClass().getSimpleName() + ")");
		}
	}

	/** Tomcat's default maximum of request threads, and the cap of {@link #requestThreads()}. */
	static final int MAX_REQUEST_THREADS = 200;

	/**
	 * Tomcat's request threads: one for each pooled connection — the requests beyond them wait in Tomcat's queue, first
	 * in first out, where a thread that finishes takes the next one without a wake-up, rather than in HikariCP's, where
	 * each wait is a hand-off between threads and wakes the pool's connection adder — unless the admitted argon2id
	 * checks and two per core besides (the grants that shed, the answers that need no check) need more, so that the
	 * checks' limit, not the thread count, sheds a login. Never more than {@value #MAX_REQUEST_THREADS}, Tomcat's own
	 * default, which is what a limit set out of the way gets.
	 */
	public int requestThreads() {
		long threads = Math.max(this.poolSize,
				(long) this.maxPasswordChecks + 2L * Runtime.getRuntime().availableProcessors());
		return (int) Math.min(threads, MAX_REQUEST_THREADS);
	}

	/**
	 * The Spring properties these settings imply. Spring's own start-up chatter is kept at WARN so that at
	 * LOG_LEVEL=info the service's one start-up line is the only info line.
	 */
	public Map<String, Object> springProperties() {
		String frameworkLevel = switch (this.logLevel) {
			case ERROR -> "error";
			case DEBUG, TRACE -> "info";
			default -> "warn";
		};
		Map<String, Object> props = new LinkedHashMap<>();
		props.put("server.address", this.host);
		props.put("server.port", this.port);
		props.put("server.tomcat.threads.max", requestThreads());
		props.put("logging.level.root", frameworkLevel);
		props.put("logging.level.io.simpleauth", this.logLevel.name().toLowerCase(Locale.ROOT));
		// A refused start is reported by SimpleAuthApplication as one line, not as Spring's failure report.
		props.put("logging.level.org.springframework.boot.SpringApplication", "off");
		props.put("logging.level.org.springframework.boot.diagnostics", "off");
		props.put("logging.level.org.springframework.boot.web.server.servlet.context", "error");
		// Spring MVC's per-request warning for unmapped paths and methods: answered by ApiExceptionHandler, no log line.
		props.put("logging.level.org.springframework.web.servlet.PageNotFound", "error");
		return props;
	}

	/** The parsed {@code TRUSTED_PROXIES} (validated at start). */
	public TrustedProxies proxies() {
		return TrustedProxies.parse(this.trustedProxies);
	}

	/** Never print the inline key or the database password. */
	@Override
	public String toString() {
		return "Settings[host=" + this.host + ", port=" + this.port + ", database=" + this.database + ", poolSize="
				+ this.poolSize + ", maxLifetimeSeconds=" + this.maxLifetimeSeconds + ", idleTimeoutSeconds="
				+ this.idleTimeoutSeconds + ", issuer=" + this.issuer + ", audience=" + this.audience + ", defaultClientId="
				+ this.defaultClientId + ", refreshTtlSeconds=" + this.refreshTtlSeconds + ", loginMaxFailures="
				+ this.loginMaxFailures + ", loginFailureWindowSeconds=" + this.loginFailureWindowSeconds
				+ ", loginIpMaxFailures=" + this.loginIpMaxFailures + ", trustedProxies=" + proxies()
				+ ", refreshMaxLifetimeSeconds=" + this.refreshMaxLifetimeSeconds + ", metricsPort=" + this.metricsPort
				+ ", maxPasswordChecks=" + this.maxPasswordChecks + "]";
	}

	private static void within(String property, long value) {
		long[] range = RANGES.get(property);
		if (value < range[0] || value > range[1]) {
			throw outOfRange(property, Long.toString(value));
		}
	}

	private static SettingsException outOfRange(String property, String value) {
		long[] range = RANGES.get(property);
		String variable = property.toUpperCase(Locale.ROOT).replace('-', '_');
		return new SettingsException(
				variable + " must be an integer between " + range[0] + " and " + range[1] + " (got '" + value + "')");
	}

}
