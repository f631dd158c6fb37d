package io.simpleauth.token;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * Refresh tokens (spec/README §7): 32 bytes from a {@link SecureRandom}, base64url without padding — 43 characters of
 * {@code [A-Za-z0-9_-]}. Only their SHA-256 over those ASCII characters is stored; a value of any other shape is refused
 * without asking the database.
 */
public final class RefreshToken {

	public static final int LENGTH = 43;

	private static final int BYTES = 32;

	private static final SecureRandom RANDOM = new SecureRandom();

	private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

	private RefreshToken() {
	}

	/** A new refresh token. */
	public static String generate() {
		byte[] bytes = new byte[BYTES];
		RANDOM.nextBytes(bytes);
		return encode(bytes);
	}

	/** The token of these 32 bytes: base64url, no padding. */
	static String encode(byte[] bytes) {
		if (bytes.length != BYTES) {
			throw new IllegalArgumentException("a refresh token is " + BYTES + " bytes");
		}
		return BASE64URL.encodeToString(bytes);
	}

	/**
	 * Whether {@code value} has the shape of a refresh token: exactly {@value #LENGTH} characters of the base64url
	 * alphabet. (The last character of 32 bytes carries 4 bits; a value whose last 2 bits are set is still taken as a
	 * well-formed token that no row can match.)
	 */
	public static boolean isWellFormed(String value) {
		if (value == null || value.length() != LENGTH) {
			return false;
		}
		for (int i = 0; i < LENGTH; i++) {
			char c = value.charAt(i);
			boolean alphabet = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'
					|| c == '_';
			if (!alphabet) {
				return false;
			}
		}
		return true;
	}

	/** SHA-256 of the token's ASCII characters: what {@code refresh_tokens.token_hash} holds. */
	public static byte[] sha256(String token) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.US_ASCII));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 unavailable", ex);
		}
	}

}
