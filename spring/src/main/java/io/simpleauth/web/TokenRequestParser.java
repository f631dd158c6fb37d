package io.simpleauth.web;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.simpleauth.config.ClientId;
import io.simpleauth.token.TokenRequest;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.web.util.UriUtils;

/**
 * Turns the raw bytes of a POST /token body into a {@link TokenRequest}, applying spec/README's rules:
 * strict UTF-8, one JSON object (string members, unknown ones ignored) or an RFC 6749 form
 * (the three parameters each exactly once, {@code client_id} at most once), the length limits and the
 * {@link ClientId} rule.
 */
public final class TokenRequestParser {

	public enum Format {

		JSON, FORM

	}

	public static final int MAX_USERNAME_CODE_POINTS = 254;

	public static final int MAX_PASSWORD_BYTES = 1024;

	private static final String CLIENT_ID = "client_id";

	private static final List<String> FORM_FIELDS = List.of("grant_type", "username", "password", CLIENT_ID);

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

	public static TokenRequest parse(Format format, byte[] body) {
		return format == Format.JSON ? parseJson(body) : parseForm(body);
	}

	private static TokenRequest parseJson(byte[] body) {
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
		JsonNode grantType = root.get("grant_type");
		if (grantType != null) {
			if (!grantType.isString()) {
				throw ApiError.invalidRequest("grant_type must be a string");
			}
			if (!"password".equals(grantType.stringValue())) {
				throw ApiError.unsupportedGrantType();
			}
		}
		String clientId = null;
		JsonNode client = root.get(CLIENT_ID);
		if (client != null) {
			if (!client.isString()) {
				throw ApiError.invalidRequest("client_id must be a string");
			}
			clientId = client.stringValue();
		}
		return validated(jsonString(root, "username"), jsonString(root, "password"), clientId);
	}

	private static String jsonString(JsonNode root, String name) {
		JsonNode node = root.get(name);
		if (node == null || !node.isString()) {
			throw ApiError.invalidRequest(name + " is required and must be a string");
		}
		return node.stringValue();
	}

	private static TokenRequest parseForm(byte[] body) {
		Map<String, String> values = new HashMap<>();
		Map<String, Integer> counts = new HashMap<>();
		// One char per byte: the separators are ASCII, and percentDecode hands back exactly the bytes of each part.
		for (String pair : new String(body, StandardCharsets.ISO_8859_1).split("&")) {
			if (pair.isEmpty()) {
				continue;
			}
			int eq = pair.indexOf('=');
			String name = percentDecode(eq >= 0 ? pair.substring(0, eq) : pair);
			if (FORM_FIELDS.contains(name)) {
				counts.merge(name, 1, Integer::sum);
				values.put(name, eq >= 0 ? percentDecode(pair.substring(eq + 1)) : "");
			}
		}
		for (String field : FORM_FIELDS) {
			if (counts.getOrDefault(field, 0) > 1) {
				throw ApiError.invalidRequest(field + " must not be repeated");
			}
		}
		String grantType = values.get("grant_type");
		if (grantType == null || grantType.isEmpty()) {
			throw ApiError.invalidRequest("grant_type is required");
		}
		if (!"password".equals(grantType)) {
			throw ApiError.unsupportedGrantType();
		}
		return validated(values.get("username"), values.get("password"), values.get(CLIENT_ID));
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
		if (clientId != null && !ClientId.isValid(clientId)) {
			throw ApiError.invalidRequest("client_id must be " + ClientId.RULE);
		}
		return new TokenRequest(username, password, clientId);
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
