package io.simpleauth.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

import org.springframework.web.util.UriUtils;

/**
 * A libpq connection URL ({@code postgres://user:pass@host:port/db?sslmode=disable}, the form fly.io
 * sets) translated to what pgjdbc wants: {@code jdbc:postgresql://host:port/db?params} plus user and
 * password kept out of the URL. libpq's TLS parameters keep libpq's meanings, see {@link #tlsParameters}.
 */
public record DatabaseSettings(String jdbcUrl, String username, String password) {

	/** The sslmode values accepted, with libpq's meanings; {@code allow} is not among them (pgjdbc differs there). */
	public static final List<String> SSL_MODES = List.of("disable", "prefer", "require", "verify-ca", "verify-full");

	/** libpq's default sslmode. */
	static final String DEFAULT_SSL_MODE = "prefer";

	/** {@code sslrootcert=system}: the JDK's trust store rather than a PEM file. */
	static final String SYSTEM_ROOTS = "system";

	/** pgjdbc's SSL factory over the JDK's default trust store (pgjdbc's own LibPQFactory reads PEM files). */
	static final String JDK_TRUST_STORE_FACTORY = "org.postgresql.ssl.DefaultJavaSSLFactory";

	/** libpq parameter names whose pgjdbc spelling differs; everything else is passed through as is. */
	private static final Map<String, String> LIBPQ_TO_PGJDBC = Map.of("connect_timeout", "connectTimeout",
			"application_name", "ApplicationName", "sslcert", "sslcert", "sslkey", "sslkey");

	public static DatabaseSettings fromUrl(String url) {
		String rest;
		if (url.startsWith("postgres://")) {
			rest = url.substring("postgres://".length());
		}
		else if (url.startsWith("postgresql://")) {
			rest = url.substring("postgresql://".length());
		}
		else {
			throw invalid("it must start with postgres:// or postgresql://");
		}
		String query = "";
		int q = rest.indexOf('?');
		if (q >= 0) {
			query = rest.substring(q + 1);
			rest = rest.substring(0, q);
		}
		String path = "";
		int slash = rest.indexOf('/');
		if (slash >= 0) {
			path = rest.substring(slash + 1);
			rest = rest.substring(0, slash);
		}
		String user = null;
		String password = null;
		int at = rest.lastIndexOf('@');
		if (at >= 0) {
			String userInfo = rest.substring(0, at);
			rest = rest.substring(at + 1);
			int colon = userInfo.indexOf(':');
			if (colon >= 0) {
				user = decode(userInfo.substring(0, colon));
				password = decode(userInfo.substring(colon + 1));
			}
			else {
				user = decode(userInfo);
			}
		}
		String host;
		String port = "5432";
		if (rest.startsWith("[")) {
			int close = rest.indexOf(']');
			if (close < 0) {
				throw invalid("unterminated IPv6 address");
			}
			host = rest.substring(0, close + 1);
			String after = rest.substring(close + 1);
			if (!after.isEmpty()) {
				if (!after.startsWith(":")) {
					throw invalid("unexpected text after the IPv6 address");
				}
				port = after.substring(1);
			}
		}
		else {
			int colon = rest.indexOf(':');
			host = colon >= 0 ? rest.substring(0, colon) : rest;
			if (colon >= 0) {
				port = rest.substring(colon + 1);
			}
		}
		if (host.isEmpty() || !host.matches("[A-Za-z0-9._\\-]+|\\[[0-9A-Fa-f:.%a-z]+\\]")) {
			throw invalid("missing or invalid host");
		}
		int portNumber;
		try {
			portNumber = Integer.parseInt(port);
		}
		catch (NumberFormatException ex) {
			throw invalid("invalid port");
		}
		if (portNumber < 1 || portNumber > 65535) {
			throw invalid("invalid port");
		}
		String database = decode(path);
		if (database.isEmpty()) {
			// libpq's default database name is the user name.
			database = user != null ? user : "";
		}
		if (database.isEmpty() || database.contains("/")) {
			throw invalid("missing or invalid database name");
		}
		Map<String, String> params = new LinkedHashMap<>();
		String sslMode = null;
		String sslRootCert = null;
		if (!query.isEmpty()) {
			for (String pair : query.split("&")) {
				if (pair.isEmpty()) {
					continue;
				}
				int eq = pair.indexOf('=');
				if (eq <= 0) {
					throw invalid("malformed query parameter");
				}
				String name = decode(pair.substring(0, eq));
				String value = decode(pair.substring(eq + 1));
				switch (name) {
					case "user" -> user = value;
					case "password" -> password = value;
					case "dbname" -> database = value;
					case "sslmode" -> sslMode = value;
					case "sslrootcert" -> sslRootCert = value;
					default -> params.put(LIBPQ_TO_PGJDBC.getOrDefault(name, name), value);
				}
			}
		}
		params.putAll(tlsParameters(sslMode, sslRootCert));
		StringBuilder jdbc = new StringBuilder("jdbc:postgresql://").append(host)
			.append(':')
			.append(portNumber)
			.append('/')
			.append(encode(database));
		if (!params.isEmpty()) {
			StringJoiner joiner = new StringJoiner("&", "?", "");
			params.forEach((k, v) -> joiner.add(encode(k) + "=" + encode(v)));
			jdbc.append(joiner);
		}
		return new DatabaseSettings(jdbc.toString(), user, password);
	}

	/**
	 * libpq's {@code sslmode}/{@code sslrootcert} as pgjdbc parameters, with libpq's meanings where pgjdbc's differ:
	 * <ul>
	 * <li>{@code disable}, {@code prefer} (the default, as in libpq: TLS when the server offers it, unverified) map
	 * one to one; an sslrootcert changes nothing for them.</li>
	 * <li>{@code require} without sslrootcert encrypts without verifying (pgjdbc's {@code require}, which never falls
	 * back to plain TCP); with one, libpq verifies the chain, so it becomes pgjdbc's {@code verify-ca}.</li>
	 * <li>{@code verify-ca} checks the chain, {@code verify-full} the chain and the host name (pgjdbc matches DNS and IP
	 * SANs). Both need an sslrootcert: pgjdbc would otherwise quietly look for {@code ~/.postgresql/root.crt}.</li>
	 * <li>{@code sslrootcert=system}: the JDK's trust store ({@code DefaultJavaSSLFactory}); a path must be a readable
	 * PEM file holding a certificate, checked here so that a bad file stops the start rather than every connect.</li>
	 * </ul>
	 */
	static Map<String, String> tlsParameters(String sslMode, String sslRootCert) {
		String mode = sslMode == null ? DEFAULT_SSL_MODE : sslMode;
		if (!SSL_MODES.contains(mode)) {
			throw new SettingsException("DATABASE_URL has an unsupported sslmode '" + mode + "' (accepted: "
					+ String.join(", ", SSL_MODES) + ")");
		}
		boolean rootGiven = sslRootCert != null && !sslRootCert.isEmpty();
		Map<String, String> tls = new LinkedHashMap<>();
		if (!rootGiven) {
			if (mode.startsWith("verify-")) {
				throw new SettingsException("DATABASE_URL has sslmode=" + mode
						+ " without sslrootcert (a PEM file of CA certificates, or 'system')");
			}
			tls.put("sslmode", mode);
			return tls;
		}
		if (!SYSTEM_ROOTS.equals(sslRootCert)) {
			checkReadableCertificates(sslRootCert);
		}
		if (mode.equals("disable") || mode.equals("prefer")) {
			tls.put("sslmode", mode); // nothing is verified in these modes
			return tls;
		}
		tls.put("sslmode", mode.equals("require") ? "verify-ca" : mode);
		if (SYSTEM_ROOTS.equals(sslRootCert)) {
			tls.put("sslfactory", JDK_TRUST_STORE_FACTORY);
		}
		else {
			tls.put("sslrootcert", sslRootCert);
		}
		return tls;
	}

	private static void checkReadableCertificates(String path) {
		try (InputStream in = Files.newInputStream(Path.of(path))) {
			if (CertificateFactory.getInstance("X.509").generateCertificates(in).isEmpty()) {
				throw new SettingsException("DATABASE_URL sslrootcert " + path + " holds no certificate");
			}
		}
		catch (IOException | InvalidPathException ex) {
			throw new SettingsException(
					"DATABASE_URL sslrootcert " + path + " cannot be read (" + ex.getClass().getSimpleName() + ")");
		}
		catch (CertificateException ex) {
			throw new SettingsException("DATABASE_URL sslrootcert " + path + " is not a PEM file of certificates");
		}
	}

	/** Never print the password. */
	@Override
	public String toString() {
		return "DatabaseSettings[jdbcUrl=" + this.jdbcUrl + ", username=" + this.username + "]";
	}

	private static SettingsException invalid(String why) {
		return new SettingsException("DATABASE_URL is malformed: " + why);
	}

	/**
	 * Percent-decoding as libpq does it ('+' stays '+'), to UTF-8 that must be valid. The text goes through ISO-8859-1
	 * (one char per byte) so that UriUtils hands back the exact bytes, which are then decoded strictly.
	 */
	private static String decode(String s) {
		try {
			byte[] bytes = UriUtils.decode(new String(s.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1),
					StandardCharsets.ISO_8859_1).getBytes(StandardCharsets.ISO_8859_1);
			return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
		}
		catch (IllegalArgumentException | CharacterCodingException ex) {
			throw invalid("bad percent-encoding");
		}
	}

	private static String encode(String s) {
		return java.net.URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
	}

}
