package io.simpleauth.token;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;

/**
 * OIDC Core §3.1.3.6: base64url (no padding) of the left-most half of the signing algorithm's hash over the ASCII
 * octets of the access token — 128 bits of SHA-256 for RS256 and ES256, 256 bits of SHA-512 for EdDSA.
 */
public final class AtHash {

	private AtHash() {
	}

	public static String of(String accessToken, SigningAlgorithm algorithm) {
		try {
			// MessageDigest is not thread-safe: one per call.
			byte[] digest = MessageDigest.getInstance(algorithm.atHashDigest())
				.digest(accessToken.getBytes(StandardCharsets.US_ASCII));
			return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, digest.length / 2));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(algorithm.atHashDigest() + " unavailable", ex);
		}
	}

}
