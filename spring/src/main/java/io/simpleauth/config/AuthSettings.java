package io.simpleauth.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import io.simpleauth.token.SigningKey;

/**
 * Every environment setting of the contract, read and validated once before Spring starts, so that a
 * bad key or a malformed DATABASE_URL stops the process with one line instead of a context failure.
 */
public record AuthSettings(String host, int port, DatabaseSettings database, int poolSize, long acquireTimeoutMs,
		String issuer, String audience, long tokenTtlSeconds, String logLevel, SigningKey signingKey) {

	public static final String DEFAULT_DATABASE_URL = "postgres://auth:auth@127.0.0.1:5432/auth";

	private static final Set<String> LOG_LEVELS = Set.of("error", "warn", "info", "debug", "trace");

	public static AuthSettings fromEnvironment(Map<String, String> env) throws InvalidSettingsException {
		String host = get(env, "HOST", "0.0.0.0");
		int port = (int) number(env, "PORT", 8080, 0, 65535);
		DatabaseSettings database = DatabaseSettings.fromUrl(get(env, "DATABASE_URL", DEFAULT_DATABASE_URL));
		int poolSize = (int) number(env, "DB_POOL_SIZE", 10, 1, 1000);
		long acquireTimeoutMs = number(env, "DB_ACQUIRE_TIMEOUT_MS", 1000, 1, 600_000);
		String issuer = get(env, "JWT_ISSUER", "http://localhost:8080");
		String audience = get(env, "JWT_AUDIENCE", "channel-api");
		long ttl = number(env, "TOKEN_TTL_SECONDS", 600, 1, 31_536_000);
		String logLevel = get(env, "LOG_LEVEL", "info").toLowerCase(Locale.ROOT);
		if (!LOG_LEVELS.contains(logLevel)) {
			throw new InvalidSettingsException("LOG_LEVEL must be one of error, warn, info, debug (got '" + logLevel + "')");
		}
		SigningKey key = SigningKey.fromPem(readKeyPem(env));
		return new AuthSettings(host, port, database, poolSize, acquireTimeoutMs, issuer, audience, ttl, logLevel, key);
	}

	private static String readKeyPem(Map<String, String> env) throws InvalidSettingsException {
		String file = env.get("JWT_PRIVATE_KEY_FILE");
		if (file != null && !file.isBlank()) {
			try {
				return Files.readString(Path.of(file), StandardCharsets.US_ASCII);
			}
			catch (IOException | RuntimeException ex) {
				throw new InvalidSettingsException("JWT_PRIVATE_KEY_FILE cannot be read: " + file + " ("
						+ ex.getClass().getSimpleName() + ")");
			}
		}
		String inline = env.get("JWT_PRIVATE_KEY");
		if (inline != null && !inline.isBlank()) {
			// Secrets stores often flatten newlines to a literal "\n".
			return inline.replace("\\n", "\n");
		}
		throw new InvalidSettingsException("no signing key: set JWT_PRIVATE_KEY_FILE or JWT_PRIVATE_KEY (PKCS#8 PEM)");
	}

	private static String get(Map<String, String> env, String name, String fallback) {
		String value = env.get(name);
		return value == null || value.isBlank() ? fallback : value.trim();
	}

	private static long number(Map<String, String> env, String name, long fallback, long min, long max)
			throws InvalidSettingsException {
		String value = get(env, name, null);
		if (value == null) {
			return fallback;
		}
		try {
			long n = Long.parseLong(value);
			if (n >= min && n <= max) {
				return n;
			}
		}
		catch (NumberFormatException ex) {
			// reported below
		}
		throw new InvalidSettingsException(name + " must be an integer between " + min + " and " + max + " (got '" + value + "')");
	}

	/**
	 * The Spring properties these settings imply. Spring's own start-up chatter is kept at WARN so that at
	 * LOG_LEVEL=info the service's one start-up line is the only info line.
	 */
	public Map<String, Object> springProperties() {
		String frameworkLevel = switch (this.logLevel) {
			case "error" -> "error";
			case "debug", "trace" -> "info";
			default -> "warn";
		};
		Map<String, Object> props = new LinkedHashMap<>();
		props.put("server.address", this.host);
		props.put("server.port", this.port);
		props.put("logging.level.root", frameworkLevel);
		props.put("logging.level.io.simpleauth", this.logLevel);
		// A refused start is reported by SimpleAuthApplication as one line, not as Spring's failure report.
		props.put("logging.level.org.springframework.boot.SpringApplication", "off");
		props.put("logging.level.org.springframework.boot.diagnostics", "off");
		props.put("logging.level.org.springframework.boot.web.server.servlet.context", "error");
		// Spring MVC's per-request warning for unmapped paths and methods: answered by ApiExceptionHandler, no log line.
		props.put("logging.level.org.springframework.web.servlet.PageNotFound", "error");
		return props;
	}

}
