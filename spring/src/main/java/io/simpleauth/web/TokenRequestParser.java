package io.simpleauth.web;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.simpleauth.token.TokenRequest;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Turns the raw bytes of a POST /token body into a {@link TokenRequest}, applying spec/README's rules:
 * strict UTF-8, one JSON object (string members, unknown ones ignored) or an RFC 6749 form
 * (the three parameters each exactly once), and the length limits.
 */
public final class TokenRequestParser {

	public enum Format {

		JSON, FORM

	}

	public static final int MAX_USERNAME_CODE_POINTS = 254;

	public static final int MAX_PASSWORD_BYTES = 1024;

	private static final List<String> FORM_FIELDS = List.of("grant_type", "username", "password");

	private static final JsonMapper JSON = JsonMapper.builder()
		.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
		.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
		.build();

	private TokenRequestParser() {
	}

	/** The body format named by a Content-Type header (media type case-insensitive, parameters ignored). */
	public static Format formatOf(String contentType) {
		if (contentType == null) {
			throw OAuthException.unsupportedMediaType();
		}
		int semicolon = contentType.indexOf(';');
		String mediaType = (semicolon >= 0 ? contentType.substring(0, semicolon) : contentType).trim()
			.toLowerCase(Locale.ROOT);
		return switch (mediaType) {
			case "application/json" -> Format.JSON;
			case "application/x-www-form-urlencoded" -> Format.FORM;
			default -> throw OAuthException.unsupportedMediaType();
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
			throw OAuthException.invalidRequest("body is not valid JSON");
		}
		if (root == null || !root.isObject()) {
			throw OAuthException.invalidRequest("body must be a JSON object");
		}
		JsonNode grantType = root.get("grant_type");
		if (grantType != null) {
			if (!grantType.isString()) {
				throw OAuthException.invalidRequest("grant_type must be a string");
			}
			if (!"password".equals(grantType.stringValue())) {
				throw OAuthException.unsupportedGrantType();
			}
		}
		return validated(jsonString(root, "username"), jsonString(root, "password"));
	}

	private static String jsonString(JsonNode root, String name) {
		JsonNode node = root.get(name);
		if (node == null || !node.isString()) {
			throw OAuthException.invalidRequest(name + " is required and must be a string");
		}
		return node.stringValue();
	}

	private static TokenRequest parseForm(byte[] body) {
		Map<String, String> values = new HashMap<>();
		Map<String, Integer> counts = new HashMap<>();
		int start = 0;
		while (start <= body.length) {
			int end = indexOf(body, (byte) '&', start);
			if (end > start) {
				int eq = indexOf(body, (byte) '=', start);
				int nameEnd = eq >= 0 && eq < end ? eq : end;
				String name = percentDecode(body, start, nameEnd);
				if (FORM_FIELDS.contains(name)) {
					String value = nameEnd < end ? percentDecode(body, nameEnd + 1, end) : "";
					counts.merge(name, 1, Integer::sum);
					values.put(name, value);
				}
			}
			start = end + 1;
		}
		for (String field : FORM_FIELDS) {
			if (counts.getOrDefault(field, 0) > 1) {
				throw OAuthException.invalidRequest(field + " must not be repeated");
			}
		}
		String grantType = values.get("grant_type");
		if (grantType == null || grantType.isEmpty()) {
			throw OAuthException.invalidRequest("grant_type is required");
		}
		if (!"password".equals(grantType)) {
			throw OAuthException.unsupportedGrantType();
		}
		return validated(values.get("username"), values.get("password"));
	}

	private static TokenRequest validated(String username, String password) {
		if (username == null || username.isEmpty()) {
			throw OAuthException.invalidRequest("username is required");
		}
		if (username.indexOf(0) >= 0) {
			// PostgreSQL text cannot hold NUL: no address contains it, and the query would fail.
			throw OAuthException.invalidRequest("username must not contain NUL");
		}
		if (username.codePointCount(0, username.length()) > MAX_USERNAME_CODE_POINTS) {
			throw OAuthException.invalidRequest("username is longer than " + MAX_USERNAME_CODE_POINTS + " characters");
		}
		if (password == null || password.isEmpty()) {
			throw OAuthException.invalidRequest("password is required");
		}
		if (password.getBytes(StandardCharsets.UTF_8).length > MAX_PASSWORD_BYTES) {
			throw OAuthException.invalidRequest("password is longer than " + MAX_PASSWORD_BYTES + " bytes");
		}
		return new TokenRequest(username, password);
	}

	/** Index of {@code b} in body at or after {@code from}, or body.length. */
	private static int indexOf(byte[] body, byte b, int from) {
		for (int i = from; i < body.length; i++) {
			if (body[i] == b) {
				return i;
			}
		}
		return body.length;
	}

	/** application/x-www-form-urlencoded decoding: '+' is a space, %XX a byte; the bytes must be UTF-8. */
	private static String percentDecode(byte[] body, int from, int to) {
		ByteArrayOutputStream out = new ByteArrayOutputStream(to - from);
		for (int i = from; i < to; i++) {
			byte b = body[i];
			if (b == '+') {
				out.write(' ');
			}
			else if (b == '%') {
				int hi = i + 1 < to ? Character.digit(body[i + 1], 16) : -1;
				int lo = i + 2 < to ? Character.digit(body[i + 2], 16) : -1;
				if (hi < 0 || lo < 0) {
					throw OAuthException.invalidRequest("malformed percent-encoding in form body");
				}
				out.write((hi << 4) | lo);
				i += 2;
			}
			else {
				out.write(b);
			}
		}
		return utf8(out.toByteArray());
	}

	private static String utf8(byte[] bytes) {
		try {
			return StandardCharsets.UTF_8.newDecoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT)
				.decode(ByteBuffer.wrap(bytes))
				.toString();
		}
		catch (CharacterCodingException ex) {
			throw OAuthException.invalidRequest("body is not valid UTF-8");
		}
	}

}
