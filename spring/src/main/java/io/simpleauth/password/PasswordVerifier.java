package io.simpleauth.password;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import io.simpleauth.metrics.Metrics;
import io.simpleauth.metrics.Metrics.Result;
import io.simpleauth.metrics.Metrics.Scheme;
import org.bouncycastle.crypto.generators.Argon2BytesGenerator;
import org.bouncycastle.crypto.params.Argon2Parameters;

import org.springframework.stereotype.Component;

/**
 * Checks a password against the PHC-style string in {@code users.password_hash}. The prefix picks the
 * scheme: {@code $argon2id$} (parameters read from the string) or the legacy {@code $hmac-sha256$}.
 * Anything else, or a malformed string, is {@link Verification#UNUSABLE}: the login fails, it never throws.
 * Stateless and thread-safe: {@link Mac} and the argon2 generator are created per call. Every verification is
 * counted ({@code simpleauth_password_checks_total}) under the scheme the stored string's prefix names.
 */
@Component
public class PasswordVerifier {

	/**
	 * Verified for an unknown user so that the answer costs what a wrong argon2id password costs. Made with
	 * the defaults for new users (m=19456, t=2, p=1) from a password nobody is asked for.
	 */
	static final String DUMMY_HASH = "$argon2id$v=19$m=19456,t=2,p=1$llZU1m3Fzgp67ZAasfJmbA$J3nlExNT1ugbXYwJH23Rgcx/EphIA2I1yrTQMMXZJqs";

	// Bounds on parameters read from stored data, so that one bad row cannot exhaust memory or CPU.
	private static final int MAX_MEMORY_KIB = 256 * 1024;

	private static final int MAX_ITERATIONS = 64;

	private static final int MAX_LANES = 64;

	private final Metrics metrics;

	public PasswordVerifier(Metrics metrics) {
		this.metrics = metrics;
	}

	public Verification verify(String password, String storedHash) {
		Scheme scheme = storedHash == null ? Scheme.UNKNOWN
				: storedHash.startsWith("$argon2id$") ? Scheme.ARGON2ID
						: storedHash.startsWith("$hmac-sha256$") ? Scheme.HMAC_SHA256 : Scheme.UNKNOWN;
		Verification verification = check(scheme, password, storedHash);
		this.metrics.passwordCheck(scheme, switch (verification) {
			case MATCH -> Result.MATCH;
			case MISMATCH -> Result.MISMATCH;
			case UNUSABLE -> Result.UNUSABLE;
		});
		return verification;
	}

	/**
	 * The decoy for an unknown user: one argon2id verification against {@link #DUMMY_HASH}, so that the answer costs
	 * what a wrong argon2id password costs. The result is irrelevant; counted as a {@code dummy} mismatch.
	 */
	public void verifyUnknownUser(String password) {
		check(Scheme.ARGON2ID, password, DUMMY_HASH);
		this.metrics.passwordCheck(Scheme.DUMMY, Result.MISMATCH);
	}

	/**
	 * The same decoy after a {@link Verification#UNUSABLE} stored hash (a disabled user's {@code $disabled$} marker,
	 * an unknown scheme), so that such an account answers no faster than an unknown user. Not counted: {@link #verify}
	 * already counted this login as {@code unusable}.
	 */
	public void padUnusable(String password) {
		check(Scheme.ARGON2ID, password, DUMMY_HASH);
	}

	private Verification check(Scheme scheme, String password, String storedHash) {
		byte[] secret = password.getBytes(StandardCharsets.UTF_8);
		return switch (scheme) {
			case ARGON2ID -> verifyArgon2id(secret, storedHash);
			case HMAC_SHA256 -> verifyHmacSha256(secret, storedHash);
			default -> Verification.UNUSABLE;
		};
	}

	/** {@code $argon2id$v=19$m=<KiB>,t=<iterations>,p=<lanes>$<salt>$<hash>}, unpadded standard Base64. */
	private Verification verifyArgon2id(byte[] secret, String stored) {
		String[] parts = stored.split("\\$", -1);
		if (parts.length != 6 || !parts[0].isEmpty() || !"v=19".equals(parts[2])) {
			return Verification.UNUSABLE;
		}
		String[] params = parts[3].split(",", -1);
		if (params.length != 3) {
			return Verification.UNUSABLE;
		}
		int memory = parameter(params[0], "m=");
		int iterations = parameter(params[1], "t=");
		int lanes = parameter(params[2], "p=");
		if (memory < 1 || iterations < 1 || lanes < 1 || memory > MAX_MEMORY_KIB || iterations > MAX_ITERATIONS
				|| lanes > MAX_LANES || memory < 8 * lanes) {
			return Verification.UNUSABLE;
		}
		byte[] salt = base64(parts[4], false);
		byte[] expected = base64(parts[5], false);
		if (salt == null || expected == null || salt.length < 8 || expected.length < 4) {
			return Verification.UNUSABLE;
		}
		Argon2Parameters parameters = new Argon2Parameters.Builder(Argon2Parameters.ARGON2_id)
			.withVersion(Argon2Parameters.ARGON2_VERSION_13)
			.withMemoryAsKB(memory)
			.withIterations(iterations)
			.withParallelism(lanes)
			.withSalt(salt)
			.build();
		Argon2BytesGenerator generator = new Argon2BytesGenerator();
		generator.init(parameters);
		byte[] actual = new byte[expected.length];
		generator.generateBytes(secret, actual);
		return MessageDigest.isEqual(actual, expected) ? Verification.MATCH : Verification.MISMATCH;
	}

	/** {@code $hmac-sha256$<salt>$<hash>}: hash = HMAC-SHA256(key = salt bytes, message = UTF-8 password). */
	private Verification verifyHmacSha256(byte[] secret, String stored) {
		String[] parts = stored.split("\\$", -1);
		if (parts.length != 4 || !parts[0].isEmpty()) {
			return Verification.UNUSABLE;
		}
		byte[] salt = base64(parts[2], true);
		byte[] expected = base64(parts[3], true);
		if (salt == null || expected == null || salt.length == 0 || expected.length != 32) {
			return Verification.UNUSABLE;
		}
		try {
			Mac mac = Mac.getInstance("HmacSHA256");
			mac.init(new SecretKeySpec(salt, "HmacSHA256"));
			byte[] actual = mac.doFinal(secret);
			return MessageDigest.isEqual(actual, expected) ? Verification.MATCH : Verification.MISMATCH;
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("HmacSHA256 unavailable", ex);
		}
	}

	private static int parameter(String field, String prefix) {
		if (!field.startsWith(prefix)) {
			return -1;
		}
		String digits = field.substring(prefix.length());
		if (digits.isEmpty() || digits.length() > 9 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
			return -1;
		}
		return Integer.parseInt(digits);
	}

	/** Standard alphabet; {@code padded} says whether '=' padding is expected (legacy) or absent (PHC). */
	private static byte[] base64(String text, boolean padded) {
		if (text.isEmpty() || (!padded && text.indexOf('=') >= 0)) {
			return null;
		}
		if (padded && text.length() % 4 != 0) {
			return null;
		}
		try {
			return Base64.getDecoder().decode(text);
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

}
