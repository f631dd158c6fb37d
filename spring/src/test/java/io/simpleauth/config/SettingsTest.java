package io.simpleauth.config;

import java.util.Map;

import io.simpleauth.password.Argon2Memory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The environment as the Binder reads it: the contract's variable names, its defaults, its refusals. */
class SettingsTest {

	@Test
	void theContractsDefaults() {
		assertThat(Settings.fromEnvironment(Map.of()))
			.extracting(Settings::host, Settings::port, Settings::database, Settings::poolSize,
					Settings::acquireTimeoutMs, Settings::issuer, Settings::audience, Settings::tokenTtlSeconds,
					Settings::logLevel)
			.containsExactly("0.0.0.0", 8080, DatabaseSettings.fromUrl(Settings.DEFAULT_DATABASE_URL), 10, 1000L,
					"http://localhost:8080", "channel-api", 600L, Settings.LogLevel.INFO);
	}

	@Test
	void everyVariableByItsContractName() {
		Settings settings = Settings.fromEnvironment(Map.of("HOST", "127.0.0.1", "PORT", "9000", "DATABASE_URL",
				"postgres://u:p@db:5433/app?sslmode=disable", "DB_POOL_SIZE", "3", "DB_ACQUIRE_TIMEOUT_MS", "250",
				"JWT_ISSUER", "https://issuer.test", "JWT_AUDIENCE", "api", "TOKEN_TTL_SECONDS", "60", "LOG_LEVEL",
				"DEBUG"));
		assertThat(settings)
			.extracting(Settings::host, Settings::port, s -> s.database().jdbcUrl(), s -> s.database().username(),
					Settings::poolSize, Settings::acquireTimeoutMs, Settings::issuer, Settings::audience,
					Settings::tokenTtlSeconds, Settings::logLevel)
			.containsExactly("127.0.0.1", 9000, "jdbc:postgresql://db:5433/app?sslmode=disable", "u", 3, 250L,
					"https://issuer.test", "api", 60L, Settings.LogLevel.DEBUG);
		assertThat(settings.springProperties()).containsEntry("server.port", 9000)
			.containsEntry("logging.level.io.simpleauth", "debug")
			.containsEntry("logging.level.root", "info");
	}

	@Test
	void blankMeansUnsetAndValuesAreTrimmed() {
		Settings settings = Settings.fromEnvironment(Map.of("PORT", "  ", "JWT_ISSUER", " https://issuer.test ",
				"JWT_PRIVATE_KEY_FILE", " ", "DB_POOL_SIZE", " 4 "));
		assertThat(settings.port()).isEqualTo(8080);
		assertThat(settings.issuer()).isEqualTo("https://issuer.test");
		assertThat(settings.poolSize()).isEqualTo(4);
		assertThatThrownBy(settings::signingKeyPem).hasMessageContaining("no signing key");
	}

	@Test
	void otherVariablesAreIgnored() {
		Settings settings = Settings.fromEnvironment(Map.of("SERVER_PORT", "1", "HOSTNAME", "box", "DB_POOL", "x",
				"JWT", "y"));
		assertThat(settings.port()).isEqualTo(8080);
		assertThat(settings.host()).isEqualTo("0.0.0.0");
		assertThat(settings.poolSize()).isEqualTo(10);
	}

	@Test
	void aRefusalIsOneLineNamingTheVariable() {
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("PORT", "abc"))).isInstanceOf(SettingsException.class)
			.hasMessage("PORT must be an integer between 0 and 65535 (got 'abc')");
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("DB_POOL_SIZE", "1001")))
			.isInstanceOf(SettingsException.class)
			.hasMessage("DB_POOL_SIZE must be an integer between 1 and 1000 (got '1001')");
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("DATABASE_URL", "not a url")))
			.isInstanceOf(SettingsException.class)
			.hasMessageStartingWith("DATABASE_URL is malformed")
			.hasMessageNotContaining("\n");
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("LOG_LEVEL", "loud")))
			.isInstanceOf(SettingsException.class)
			.hasMessageContaining("LOG_LEVEL");
	}

	@Test
	void theLimitsDefaults() {
		Settings settings = Settings.fromEnvironment(Map.of());
		assertThat(settings)
			.extracting(Settings::refreshTtlSeconds, Settings::loginMaxFailures, Settings::loginFailureWindowSeconds,
					Settings::loginIpMaxFailures, s -> s.proxies().isEmpty(), Settings::maxPasswordChecks,
					Settings::refreshMaxLifetimeSeconds, Settings::metricsPort)
			.containsExactly(2_592_000, 10, 300, 100, true, 4 * Argon2Memory.checksAtOnce(), 7_776_000, 9091);
	}

	@Test
	void maxPasswordChecksDefaultsToFourTimesTheChecksRunAtOnceNotTheCores() {
		// The project's 96 MiB heap runs one check at once whatever the cores (Argon2MemoryTest): four admitted.
		assertThat(Settings.fromEnvironment(Map.of(), 1).maxPasswordChecks()).isEqualTo(4);
		assertThat(Settings.fromEnvironment(Map.of(), 3).maxPasswordChecks()).isEqualTo(12);
		assertThat(Settings.fromEnvironment(Map.of("MAX_PASSWORD_CHECKS", "5"), 1).maxPasswordChecks()).isEqualTo(5);
	}

	@Test
	void tomcatHasAThreadPerConnectionOrEnoughForTheAdmittedChecksAndTwoPerCoreUpToItsDefault() {
		int cores = Runtime.getRuntime().availableProcessors();
		Settings defaults = Settings.fromEnvironment(Map.of());
		assertThat(defaults.requestThreads()).isEqualTo(Math.max(10, 4 * Argon2Memory.checksAtOnce() + 2 * cores));
		assertThat(defaults.springProperties()).containsEntry("server.tomcat.threads.max", defaults.requestThreads());
		// The pool's connections, when the checks need fewer ...
		assertThat(Settings.fromEnvironment(Map.of("DB_POOL_SIZE", "50", "MAX_PASSWORD_CHECKS", "5")).requestThreads())
			.isEqualTo(50);
		// ... else every admitted check and two per core.
		assertThat(Settings.fromEnvironment(Map.of("DB_POOL_SIZE", "3", "MAX_PASSWORD_CHECKS", "40")).requestThreads())
			.isEqualTo(40 + 2 * cores);
		// A limit set out of the way gets Tomcat's own default, not millions of threads.
		assertThat(Settings.fromEnvironment(Map.of("MAX_PASSWORD_CHECKS", "1000000")).requestThreads())
			.isEqualTo(Settings.MAX_REQUEST_THREADS)
			.isEqualTo(200);
	}

	@Test
	void theLimitsByTheirContractNames() {
		Settings settings = Settings.fromEnvironment(Map.of("REFRESH_TTL_SECONDS", "86400", "LOGIN_MAX_FAILURES", "3",
				"LOGIN_FAILURE_WINDOW_SECONDS", "60", "LOGIN_IP_MAX_FAILURES", "1000000", "TRUSTED_PROXIES",
				"10.0.0.0/8", "MAX_PASSWORD_CHECKS", "1", "REFRESH_MAX_LIFETIME_SECONDS", "86400", "METRICS_PORT",
				"9100"));
		assertThat(settings)
			.extracting(Settings::refreshTtlSeconds, Settings::loginMaxFailures, Settings::loginFailureWindowSeconds,
					Settings::loginIpMaxFailures, s -> s.proxies().toString(), Settings::maxPasswordChecks,
					Settings::refreshMaxLifetimeSeconds, Settings::metricsPort)
			.containsExactly(86_400, 3, 60, 1_000_000, "10.0.0.0/8", 1, 86_400, 9100);
		assertThat(Settings.fromEnvironment(Map.of("TRUSTED_PROXIES", " ", "REFRESH_MAX_LIFETIME_SECONDS", "",
				"METRICS_PORT", " "))).as("set but empty is unset")
			.extracting(s -> s.proxies().isEmpty(), Settings::refreshMaxLifetimeSeconds, Settings::metricsPort)
			.containsExactly(true, 7_776_000, 9091);
	}

	@ParameterizedTest
	@ValueSource(strings = { "REFRESH_TTL_SECONDS", "LOGIN_MAX_FAILURES", "LOGIN_FAILURE_WINDOW_SECONDS",
			"LOGIN_IP_MAX_FAILURES", "MAX_PASSWORD_CHECKS", "REFRESH_MAX_LIFETIME_SECONDS" })
	void aLimitThatIsNotAPositiveIntegerIsRefusedInOneLine(String variable) {
		for (String bad : new String[] { "0", "-1", "abc", "1.5", "2147483648", "ten" }) {
			assertThatThrownBy(() -> Settings.fromEnvironment(Map.of(variable, bad))).as(variable + "=" + bad)
				.isInstanceOf(SettingsException.class)
				.hasMessage(variable + " must be an integer between 1 and 2147483647 (got '" + bad + "')");
		}
		// The lifetime bounds the TTL from above.
		Map<String, String> largest = new java.util.HashMap<>(Map.of("REFRESH_MAX_LIFETIME_SECONDS", "2147483647"));
		largest.put(variable, "2147483647");
		assertThat(Settings.fromEnvironment(largest)).isNotNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "0", "65536", "-1", "abc", "9091.0", "0x" })
	void metricsPortIsAnIntegerFrom1To65535(String bad) {
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("METRICS_PORT", bad))).as(bad)
			.isInstanceOf(SettingsException.class)
			.hasMessage("METRICS_PORT must be an integer between 1 and 65535 (got '" + bad + "')");
		assertThat(Settings.fromEnvironment(Map.of("METRICS_PORT", "1")).metricsPort()).isEqualTo(1);
		assertThat(Settings.fromEnvironment(Map.of("METRICS_PORT", "65535")).metricsPort()).isEqualTo(65535);
	}

	@Test
	void metricsPortIsNotThePort() {
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("METRICS_PORT", "8080")))
			.isInstanceOf(SettingsException.class)
			.hasMessageStartingWith("METRICS_PORT must differ from PORT");
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("PORT", "9091")))
			.isInstanceOf(SettingsException.class)
			.hasMessageStartingWith("METRICS_PORT must differ from PORT");
		assertThat(Settings.fromEnvironment(Map.of("PORT", "9091", "METRICS_PORT", "9092")).metricsPort())
			.isEqualTo(9092);
	}

	@Test
	void theMaxLifetimeIsNotBelowTheRefreshTtl() {
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("REFRESH_TTL_SECONDS", "100",
				"REFRESH_MAX_LIFETIME_SECONDS", "99")))
			.isInstanceOf(SettingsException.class)
			.hasMessageStartingWith("REFRESH_MAX_LIFETIME_SECONDS must not be less than REFRESH_TTL_SECONDS");
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("REFRESH_TTL_SECONDS", "7776001")))
			.as("against the default")
			.hasMessageStartingWith("REFRESH_MAX_LIFETIME_SECONDS");
		assertThat(Settings.fromEnvironment(Map.of("REFRESH_TTL_SECONDS", "100", "REFRESH_MAX_LIFETIME_SECONDS",
				"100"))).isNotNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "true", "false", "1", "yes", "anything" })
	void trustProxyHeadersIsRefusedForTrustedProxies(String value) {
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("TRUST_PROXY_HEADERS", value)))
			.isInstanceOf(SettingsException.class)
			.hasMessageStartingWith("TRUST_PROXY_HEADERS was replaced by TRUSTED_PROXIES");
		assertThat(Settings.fromEnvironment(Map.of("TRUST_PROXY_HEADERS", " "))).as("empty is unset").isNotNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "a,,b", "10.0.0.1,", ",10.0.0.1", "10.0.0.1/8", "300.1.1.1", "::1/129", "x",
			"10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0.0/8/8", "[::1]", "::1%lo",
			"10.0.0.1:80", "2001:db8::1/64", "fe80::/9x", "010.0.0.0/8", "host.example" })
	void aBadTrustedProxiesIsRefusedNamingIt(String bad) {
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("TRUSTED_PROXIES", bad))).as(bad)
			.isInstanceOf(SettingsException.class)
			.hasMessageStartingWith("TRUSTED_PROXIES must be")
			.hasMessageNotContaining("\n");
	}

	@Test
	void thePoolsLifetimeAndIdleTimeoutDefaultsAndNames() {
		assertThat(Settings.fromEnvironment(Map.of()))
			.extracting(Settings::maxLifetimeSeconds, Settings::idleTimeoutSeconds)
			.containsExactly(600, 300);
		assertThat(Settings.fromEnvironment(Map.of("DB_MAX_LIFETIME_SECONDS", "1800", "DB_IDLE_TIMEOUT_SECONDS", "60")))
			.extracting(Settings::maxLifetimeSeconds, Settings::idleTimeoutSeconds)
			.containsExactly(1800, 60);
		// HikariCP's minimums are the contract's, and accepted.
		assertThat(Settings.fromEnvironment(Map.of("DB_MAX_LIFETIME_SECONDS", "30", "DB_IDLE_TIMEOUT_SECONDS", "10")))
			.extracting(Settings::maxLifetimeSeconds, Settings::idleTimeoutSeconds)
			.containsExactly(30, 10);
		assertThat(Settings.fromEnvironment(Map.of("DB_MAX_LIFETIME_SECONDS", " ", "DB_IDLE_TIMEOUT_SECONDS", "")))
			.extracting(Settings::maxLifetimeSeconds, Settings::idleTimeoutSeconds)
			.containsExactly(600, 300);
	}

	@Test
	void aPoolLifetimeOrIdleTimeoutOutsideItsRuleIsRefusedInOneLine() {
		for (String bad : new String[] { "29", "0", "-1", "abc", "1.5", "2147483648", "600s" }) {
			assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("DB_MAX_LIFETIME_SECONDS", bad))).as(bad)
				.isInstanceOf(SettingsException.class)
				.hasMessage("DB_MAX_LIFETIME_SECONDS must be an integer between 30 and 2147483647 (got '" + bad + "')");
		}
		for (String bad : new String[] { "9", "0", "-1", "abc", "1.5", "2147483648", "300s" }) {
			assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("DB_IDLE_TIMEOUT_SECONDS", bad))).as(bad)
				.isInstanceOf(SettingsException.class)
				.hasMessage("DB_IDLE_TIMEOUT_SECONDS must be an integer between 10 and 2147483647 (got '" + bad + "')");
		}
	}

	@Test
	void anIdleTimeoutNotShorterThanTheLifetimeIsRefused() {
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("DB_MAX_LIFETIME_SECONDS", "300",
				"DB_IDLE_TIMEOUT_SECONDS", "300")))
			.isInstanceOf(SettingsException.class)
			.hasMessage("DB_IDLE_TIMEOUT_SECONDS must be less than DB_MAX_LIFETIME_SECONDS (got 300 and 300)");
		// Against the other's default, either way round.
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("DB_IDLE_TIMEOUT_SECONDS", "601")))
			.isInstanceOf(SettingsException.class)
			.hasMessage("DB_IDLE_TIMEOUT_SECONDS must be less than DB_MAX_LIFETIME_SECONDS (got 601 and 600)");
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("DB_MAX_LIFETIME_SECONDS", "300")))
			.isInstanceOf(SettingsException.class)
			.hasMessage("DB_IDLE_TIMEOUT_SECONDS must be less than DB_MAX_LIFETIME_SECONDS (got 300 and 300)");
		assertThat(Settings.fromEnvironment(Map.of("DB_MAX_LIFETIME_SECONDS", "301")).maxLifetimeSeconds()).isEqualTo(301);
	}

	@ParameterizedTest
	@ValueSource(strings = { "http://localhost:8080", "https://issuer.example.test", "https://login.example.test/tenant-1/",
			"HTTPS://Issuer.Example.Test:8443/a/b", "http://127.0.0.1", "http://[::1]:8080/" })
	void anHttpIssuerWithAHostIsAccepted(String issuer) {
		assertThat(Settings.fromEnvironment(Map.of("JWT_ISSUER", issuer)).issuer()).isEqualTo(issuer);
	}

	@ParameterizedTest
	@ValueSource(strings = { "not a url", "issuer.example.test", "ftp://issuer.example.test", "https://",
			"https://issuer.example.test/?tenant=1", "https://issuer.example.test/#x", "https://issuer.example.test?",
			"/relative/path", "mailto:someone@example.com", "http:/one-slash", "urn:issuer" })
	void anIssuerThatIsNotAnHttpUrlWithAHostIsRefused(String issuer) {
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("JWT_ISSUER", issuer)))
			.isInstanceOf(SettingsException.class)
			.hasMessageStartingWith("JWT_ISSUER must be an absolute http or https URL")
			.hasMessageNotContaining("\n");
	}

	@Test
	void theDefaultClientIdIsPublicAndFollowsTheClientIdRule() {
		assertThat(Settings.fromEnvironment(Map.of()).defaultClientId()).isEqualTo("public");
		assertThat(Settings.fromEnvironment(Map.of("DEFAULT_CLIENT_ID", "mobile-app")).defaultClientId())
			.isEqualTo("mobile-app");
		assertThat(Settings.fromEnvironment(Map.of("DEFAULT_CLIENT_ID", "c".repeat(128))).defaultClientId()).hasSize(128);
		for (String bad : new String[] { "c".repeat(129), "tab\there", "caf\u00e9", "new\nline" }) {
			assertThatThrownBy(() -> Settings.fromEnvironment(Map.of("DEFAULT_CLIENT_ID", bad))).as(bad)
				.isInstanceOf(SettingsException.class)
				.hasMessageStartingWith("DEFAULT_CLIENT_ID must be 1-128 printable ASCII characters")
				.hasMessageNotContaining("\n");
		}
	}

	@Test
	void anUnreadablePublicKeysFileIsNamedAndAnUnsetOneIsNone() {
		assertThat(Settings.fromEnvironment(Map.of()).publicKeysPem()).isNull();
		Settings settings = Settings.fromEnvironment(Map.of("JWT_PUBLIC_KEYS_FILE", "/nonexistent/bundle.pem"));
		assertThatThrownBy(settings::publicKeysPem).isInstanceOf(SettingsException.class)
			.hasMessageStartingWith("JWT_PUBLIC_KEYS_FILE cannot be read")
			.hasMessageContaining("/nonexistent/bundle.pem");
	}

	@Test
	void neitherTheInlineKeyNorTheDatabasePasswordIsPrinted() {
		Settings settings = Settings.fromEnvironment(
				Map.of("JWT_PRIVATE_KEY", "-----BEGIN PRIVATE KEY-----secret", "DATABASE_URL", "postgres://u:hunter2@db/app"));
		assertThat(settings.toString()).doesNotContain("secret").doesNotContain("hunter2");
	}

}
