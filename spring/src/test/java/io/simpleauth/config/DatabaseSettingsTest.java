package io.simpleauth.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DatabaseSettingsTest {

	@Test
	void theContractDefault() throws Exception {
		DatabaseSettings db = DatabaseSettings.fromUrl(Settings.DEFAULT_DATABASE_URL);
		assertThat(db.jdbcUrl()).isEqualTo("jdbc:postgresql://127.0.0.1:5432/auth?sslmode=prefer");
		assertThat(db.username()).isEqualTo("auth");
		assertThat(db.password()).isEqualTo("auth");
	}

	@Test
	void flyIoFormKeepsItsParameters() throws Exception {
		DatabaseSettings db = DatabaseSettings
			.fromUrl("postgres://app_user:s3cr%40t%2Fx@top2.nearest.of.my-db.internal:5433/my_app?sslmode=disable");
		assertThat(db.jdbcUrl()).isEqualTo("jdbc:postgresql://top2.nearest.of.my-db.internal:5433/my_app?sslmode=disable");
		assertThat(db.username()).isEqualTo("app_user");
		assertThat(db.password()).isEqualTo("s3cr@t/x");
		assertThat(db.toString()).doesNotContain("s3cr");
	}

	@Test
	void postgresqlSchemeDefaultPortIpv6AndLibpqParameterNames() throws Exception {
		DatabaseSettings db = DatabaseSettings.fromUrl("postgresql://u@[::1]/d?connect_timeout=5&application_name=x");
		assertThat(db.jdbcUrl())
			.isEqualTo("jdbc:postgresql://[::1]:5432/d?connectTimeout=5&ApplicationName=x&sslmode=prefer");
		assertThat(db.username()).isEqualTo("u");
		assertThat(db.password()).isNull();
	}

	@Test
	void aPlusInTheUrlIsAPlusAndEscapesAreUtf8() throws Exception {
		DatabaseSettings db = DatabaseSettings.fromUrl("postgres://us%C3%A9r:a+b%2Bc@localhost/app");
		assertThat(db.username()).isEqualTo("us\u00e9r");
		assertThat(db.password()).isEqualTo("a+b+c");
	}

	@Test
	void theDatabaseDefaultsToTheUserName() throws Exception {
		assertThat(DatabaseSettings.fromUrl("postgres://auth:pw@localhost").jdbcUrl())
			.isEqualTo("jdbc:postgresql://localhost:5432/auth?sslmode=prefer");
	}

	// ------------------------------------------------------------------ TLS (libpq's sslmode / sslrootcert)

	static final String CA = "src/test/resources/tls/test-ca.pem";

	static final String BASE = "postgres://auth:auth@db.example:5432/auth";

	@ParameterizedTest
	@ValueSource(strings = { "disable", "prefer", "require" })
	void modesWithoutVerificationMapOneToOne(String mode) throws Exception {
		assertThat(DatabaseSettings.fromUrl(BASE + "?sslmode=" + mode).jdbcUrl())
			.isEqualTo("jdbc:postgresql://db.example:5432/auth?sslmode=" + mode);
	}

	@Test
	void requireWithARootCertificateVerifiesTheChainAsInLibpq() throws Exception {
		assertThat(DatabaseSettings.fromUrl(BASE + "?sslmode=require&sslrootcert=" + CA).jdbcUrl())
			.isEqualTo("jdbc:postgresql://db.example:5432/auth?sslmode=verify-ca&sslrootcert=" + encoded(CA));
	}

	@ParameterizedTest
	@ValueSource(strings = { "verify-ca", "verify-full" })
	void verifyingModesPassTheRootCertificate(String mode) throws Exception {
		assertThat(DatabaseSettings.fromUrl(BASE + "?sslrootcert=" + CA + "&sslmode=" + mode).jdbcUrl())
			.isEqualTo("jdbc:postgresql://db.example:5432/auth?sslmode=" + mode + "&sslrootcert=" + encoded(CA));
	}

	@ParameterizedTest
	@ValueSource(strings = { "require", "verify-ca", "verify-full" })
	void systemRootsAreTheJdkTrustStore(String mode) throws Exception {
		String expectedMode = mode.equals("require") ? "verify-ca" : mode;
		assertThat(DatabaseSettings.fromUrl(BASE + "?sslmode=" + mode + "&sslrootcert=system").jdbcUrl())
			.isEqualTo("jdbc:postgresql://db.example:5432/auth?sslmode=" + expectedMode
					+ "&sslfactory=org.postgresql.ssl.DefaultJavaSSLFactory");
	}

	@ParameterizedTest
	@ValueSource(strings = { "disable", "prefer" })
	void aRootCertificateVerifiesNothingInModesThatDoNotVerify(String mode) throws Exception {
		assertThat(DatabaseSettings.fromUrl(BASE + "?sslmode=" + mode + "&sslrootcert=" + CA).jdbcUrl())
			.isEqualTo("jdbc:postgresql://db.example:5432/auth?sslmode=" + mode);
		assertThat(DatabaseSettings.fromUrl(BASE + "?sslmode=" + mode + "&sslrootcert=system").jdbcUrl())
			.isEqualTo("jdbc:postgresql://db.example:5432/auth?sslmode=" + mode);
	}

	@Test
	void otherParametersStayNextToTheTlsOnes() throws Exception {
		assertThat(DatabaseSettings.fromUrl(BASE + "?connect_timeout=3&sslmode=verify-full&sslrootcert=system")
			.jdbcUrl()).isEqualTo("jdbc:postgresql://db.example:5432/auth?connectTimeout=3&sslmode=verify-full"
					+ "&sslfactory=org.postgresql.ssl.DefaultJavaSSLFactory");
	}

	@ParameterizedTest
	@ValueSource(strings = { "bogus", "allow", "VERIFY-FULL", "Require", "", "verify_full" })
	void otherSslModesAreRefusedNamingTheAcceptedOnes(String mode) {
		assertThatThrownBy(() -> DatabaseSettings.fromUrl(BASE + "?sslmode=" + mode))
			.isInstanceOf(SettingsException.class)
			.hasMessageContaining("sslmode '" + mode + "'")
			.hasMessageContaining("disable, prefer, require, verify-ca, verify-full")
			.hasMessageNotContaining("\n");
	}

	@ParameterizedTest
	@ValueSource(strings = { "verify-ca", "verify-full" })
	void verifyingWithoutARootCertificateIsRefused(String mode) {
		for (String url : new String[] { BASE + "?sslmode=" + mode, BASE + "?sslmode=" + mode + "&sslrootcert=" }) {
			assertThatThrownBy(() -> DatabaseSettings.fromUrl(url)).isInstanceOf(SettingsException.class)
				.hasMessageContaining("sslmode=" + mode)
				.hasMessageContaining("sslrootcert");
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "src/test/resources/tls/no-such-ca.pem", "src/test/resources/tls",
			"src/test/resources/tls/not-a-certificate.pem" })
	void anUnreadableRootCertificateIsRefused(String path) {
		for (String mode : new String[] { "require", "verify-ca", "verify-full", "prefer" }) {
			assertThatThrownBy(() -> DatabaseSettings.fromUrl(BASE + "?sslmode=" + mode + "&sslrootcert=" + path))
				.as(mode + " " + path)
				.isInstanceOf(SettingsException.class)
				.hasMessageContaining("sslrootcert " + path);
		}
	}

	private static String encoded(String value) {
		return java.net.URLEncoder.encode(value, java.nio.charset.StandardCharsets.UTF_8);
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "not a url", "mysql://u:p@host/db", "postgres://", "postgres://u:p@/db",
			"postgres://u:p@host:notaport/db", "postgres://u:p@host:99999/db", "postgres://u:p%zz@host/db",
			"postgres://u:p@[::1/db", "postgres://u:p@host/db?sslmode", "postgres://u:p%C3%28@host/db",
			"postgres://u:p%2@host/db", "postgres://u:p@host/db%" })
	void malformedUrlsAreRefusedWithTheVariableNamed(String url) {
		assertThatThrownBy(() -> DatabaseSettings.fromUrl(url)).isInstanceOf(SettingsException.class)
			.hasMessageStartingWith("DATABASE_URL is malformed");
	}

	@ParameterizedTest
	@ValueSource(strings = { "PORT=abc", "PORT=70000", "DB_POOL_SIZE=0", "DB_ACQUIRE_TIMEOUT_MS=x",
			"TOKEN_TTL_SECONDS=-1", "LOG_LEVEL=loud" })
	void badNumbersAndLevelsAreRefused(String assignment) {
		String[] kv = assignment.split("=", 2);
		assertThatThrownBy(() -> Settings
			.fromEnvironment(java.util.Map.of(kv[0], kv[1], "JWT_PRIVATE_KEY_FILE", "../spec/keys/dev-rsa-2048.pem")))
			.isInstanceOf(SettingsException.class)
			.hasMessageContaining(kv[0]);
	}

}
