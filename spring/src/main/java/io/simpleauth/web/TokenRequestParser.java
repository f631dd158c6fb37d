package io.simpleauth.web;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import io.simpleauth.config.ClientId;
import io.simpleauth.token.TokenRequest;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.web.util.UriUtils;

/**
 * Turns the raw bytes of a POST /token or POST /revoke body into a {@link TokenRequest} or the token to revoke,
 * applying spec/README's rules: strict UTF-8, one JSON object (string members, unknown ones ignored) or an RFC 6749 /
 * RFC 7009 form (each parameter of the grant exactly once, {@code client_id} at most once, others ignored), the length
 * limits and the {@link ClientId} rule.
 */
public final class TokenRequestParser {

	public enum Format {

		JSON, FORM

	}

	public static final int MAX_USERNAME_CODE_POINTS = 254;

	public static final int MAX_PASSWORD_BYTES = 1024;

	private static final String GRANT_TYPE = "grant_type";

	private static final String USERNAME = "username";

	private static final String PASSWORD = "password";

	private static final String REFRESH_TOKEN = "refresh_token";

	private static final String CLIENT_ID = "client_id";

	private static final String TOKEN = "token";

	private static final Set<String> TOKEN_FIELDS = Set.of(GRANT_TYPE, USERNAME, PASSWORD, REFRESH_TOKEN, CLIENT_ID);

	private static final Set<String> REVOKE_FIELDS = Set.of(TOKEN);

	private static final JsonMapper JSON = JsonMapper.builder()
		.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
		.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
		.build();

	private TokenRequestParser() {
	}

	/** The body format named by a Content-Type header (media type case-insensitive, parameters ignored). */
	public static Format formatOf(String contentType) {
		if (contentType == null) {
			throw ApiError.unsupportedMediaType();
		}
		int semicolon = contentType.indexOf(';');
		String mediaType = (semicolon >= 0 ? contentType.substring(0, semicolon) : contentType).trim()
			.toLowerCase(Locale.ROOT);
		return switch (mediaType) {
			case "application/json" -> Format.JSON;
			case "application/x-www-form-urlencoded" -> Format.FORM;
			default -> throw ApiError.unsupportedMediaType();
		};
	}

	/** A POST /token body: the password grant or the refresh grant. */
	public static TokenRequest parse(Format format, byte[] body) {
		return format == Format.JSON ? parseJson(body) : parseForm(body);
	}

	/**
	 * A POST /revoke body (RFC 7009 §2.1): the {@code token}, a non-empty string. Everything else —
	 * {@code token_type_hint} and {@code client_id} included, of any type, given any number of times — is ignored.
	 */
	public static String parseRevocation(Format format, byte[] body) {
		String token;
		if (format == Format.JSON) {
			token = jsonString(jsonObject(body), TOKEN);
		}
		else {
			Form form = Form.of(body, REVOKE_FIELDS);
			form.once(TOKEN);
			token = form.value(TOKEN);
		}
		return required(TOKEN, token);
	}

	private static TokenRequest parseJson(byte[] body) {
		JsonNode root = jsonObject(body);
		boolean refresh = false;
		JsonNode grantType = root.get(GRANT_TYPE);
		if (grantType != null) {
			if (!grantType.isString()) {
				throw ApiError.invalidRequest("grant_type must be a string");
			}
			refresh = isRefresh(grantType.stringValue());
		}
		String clientId = null;
		JsonNode client = root.get(CLIENT_ID);
		if (client != null) {
			if (!client.isString()) {
				throw ApiError.invalidRequest("client_id must be a string");
			}
			clientId = client.stringValue();
		}
		if (refresh) {
			return refresh(jsonString(root, REFRESH_TOKEN), clientId);
		}
		return validated(jsonString(root, USERNAME), jsonString(root, PASSWORD), clientId);
	}

	private static JsonNode jsonObject(byte[] body) {
		JsonNode root;
		try {
			root = JSON.readTree(utf8(body));
		}
		catch (JacksonException ex) {
			throw ApiError.invalidRequest("body is not valid JSON");
		}
		if (root == null || !root.isObject()) {
			throw ApiError.invalidRequest("body must be a JSON object");
		}
		return root;
	}

	private static String jsonString(JsonNode root, String name) {
		JsonNode node = root.get(name);
		if (node == null || !node.isString()) {
			throw ApiError.invalidRequest(name + " is required and must be a string");
		}
		return node.stringValue();
	}

	private static TokenRequest parseForm(byte[] body) {
		Form form = Form.of(body, TOKEN_FIELDS);
		form.once(GRANT_TYPE);
		String grantType = form.value(GRANT_TYPE);
		if (grantType == null || grantType.isEmpty()) {
			throw ApiError.invalidRequest("grant_type is required");
		}
		boolean refresh = isRefresh(grantType);
		form.once(CLIENT_ID);
		if (refresh) {
			form.once(REFRESH_TOKEN);
			return refresh(form.value(REFRESH_TOKEN), form.value(CLIENT_ID));
		}
		form.once(USERNAME);
		form.once(PASSWORD);
		return validated(form.value(USERNAME), form.value(PASSWORD), form.value(CLIENT_ID));
	}

	/** Whether a grant_type names the refresh grant; anything but the two grants is unsupported. */
	private static boolean isRefresh(String grantType) {
		return switch (grantType) {
			case "password" -> false;
			case "refresh_token" -> true;
			default -> throw ApiError.unsupportedGrantType();
		};
	}

	/** The refresh grant: a non-empty token (its shape is the grant's business: invalid_grant, not a 400 here). */
	private static TokenRequest refresh(String refreshToken, String clientId) {
		return new TokenRequest.Refresh(required(REFRESH_TOKEN, refreshToken), validClientId(clientId));
	}

	private static String required(String name, String value) {
		if (value == null || value.isEmpty()) {
			throw ApiError.invalidRequest(name + " is required");
		}
		return value;
	}

	private static String validClientId(String clientId) {
		if (clientId != null && !ClientId.isValid(clientId)) {
			throw ApiError.invalidRequest("client_id must be " + ClientId.RULE);
		}
		return clientId;
	}

	/**
	 * An application/x-www-form-urlencoded body, as far as the named parameters go: each one's decoded value (the last
	 * given) and how often it was given. Other parameters are skipped.
	 */
	private record Form(Map<String, String> values, Map<String, Integer> counts) {

		static Form of(byte[] body, Set<String> names) {
			Form form = new Form(new HashMap<>(), new HashMap<>());
			// One char per byte: the separators are ASCII, and percentDecode hands back exactly the bytes of each part.
			for (String pair : new String(body, StandardCharsets.ISO_8859_1).split("&")) {
				if (pair.isEmpty()) {
					continue;
				}
				int eq = pair.indexOf('=');
				String name = percentDecode(eq >= 0 ? pair.substring(0, eq) : pair);
				if (names.contains(name)) {
					form.counts.merge(name, 1, Integer::sum);
					form.values.put(name, eq >= 0 ? percentDecode(pair.substring(eq + 1)) : "");
				}
			}
			return form;
		}

		/** RFC 6749 §3.2: a parameter of the request must not be included more than once. */
		void once(String name) {
			if (this.counts.getOrDefault(name, 0) > 1) {
				throw ApiError.invalidRequest(name + " must not be repeated");
			}
		}

		String value(String name) {
			return this.values.get(name);
		}

	}

	private static TokenRequest validated(String username, String password, String clientId) {
		if (username == null || username.isEmpty()) {
			throw ApiError.invalidRequest("username is required");
		}
		if (username.indexOf(0) >= 0) {
			// PostgreSQL text cannot hold NUL: no address contains it, and the query would fail.
			throw ApiError.invalidRequest("username must not contain NUL");
		}
		if (username.codePointCount(0, username.length()) > MAX_USERNAME_CODE_POINTS) {
			throw ApiError.invalidRequest("username is longer than " + MAX_USERNAME_CODE_POINTS + " characters");
		}
		if (password == null || password.isEmpty()) {
			throw ApiError.invalidRequest("password is required");
		}
		if (password.getBytes(StandardCharsets.UTF_8).length > MAX_PASSWORD_BYTES) {
			throw ApiError.invalidRequest("password is longer than " + MAX_PASSWORD_BYTES + " bytes");
		}
		return new TokenRequest.Password(username, password, validClientId(clientId));
	}

	/**
	 * application/x-www-form-urlencoded decoding of one name or value held one char per byte: '+' is a space, %XX a
	 * byte (UriUtils, strict about the hex digits); the bytes must be UTF-8.
	 */
	private static String percentDecode(String latin1) {
		try {
			return utf8(UriUtils.decode(latin1.replace('+', ' '), StandardCharsets.ISO_8859_1)
				.getBytes(StandardCharsets.ISO_8859_1));
		}
		catch (IllegalArgumentException ex) {
			throw ApiError.invalidRequest("malformed percent-encoding in form body");
		}
	}

	private static String utf8(byte[] bytes) {
		try {
			// A fresh decoder reports malformed input rather than replacing it.
			return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
		}
		catch (CharacterCodingException ex) {
			throw ApiError.invalidRequest("body is not valid UTF-8");
		}
	}

}
