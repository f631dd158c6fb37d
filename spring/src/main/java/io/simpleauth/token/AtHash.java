package io.simpleauth.token;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;

/** OIDC Core §3.1.3.6: base64url (no padding) of the left-most 128 bits of SHA-256(ASCII(access_token)). */
public final class AtHash {

	private AtHash() {
	}

	public static String of(String accessToken) {
		try {
			// MessageDigest is not thread-safe: one per call.
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(accessToken.getBytes(StandardCharsets.US_ASCII));
			return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, 16));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 unavailable", ex);
		}
	}

}
