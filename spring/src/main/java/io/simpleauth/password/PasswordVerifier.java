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
 * Thread-safe: {@link Mac} and the argon2 generator are created per call, the generator's working memory taken from
 * the process's pool ({@link Argon2Memory}). Every verification is
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

	/** {@link #DUMMY_HASH}, parsed once. */
	private static final StoredHash DUMMY = parse(DUMMY_HASH);

	private final Metrics metrics;

	public PasswordVerifier(Metrics metrics) {
		this.metrics = metrics;
	}

	public Verification verify(String password, String storedHash) {
		Scheme scheme = schemeOf(storedHash);
		Verification verification = check(password, parse(storedHash));
		this.metrics.passwordCheck(scheme, switch (verification) {
			case MATCH -> Result.MATCH;
			case MISMATCH -> Result.MISMATCH;
			case UNUSABLE -> Result.UNUSABLE;
		});
		return verification;
	}

	/**
	 * Whether {@link #verify} could check a password against this stored hash, or would count it {@code unusable} (a
	 * disabled user's marker, an unknown scheme, a malformed string). Parses only: nothing is computed or counted.
	 */
	public boolean isUsable(String storedHash) {
		return parse(storedHash) != null;
	}

	/**
	 * Whether checking a password against this stored hash is the legacy HMAC (microseconds): a usable
	 * {@code $hmac-sha256$} string, whose match needs no argon2id run and whose mismatch pays the decoy
	 * ({@link #decoy}). Anything else costs one argon2id run — the stored argon2id hash, or the dummy run an unusable one
	 * pays. Parses only.
	 */
	public boolean isLegacy(String storedHash) {
		return parse(storedHash) instanceof HmacSha256;
	}

	/**
	 * The decoy for an unknown user: one argon2id verification against {@link #DUMMY_HASH}, so that the answer costs
	 * what a wrong argon2id password costs. The result is irrelevant; counted as a {@code dummy} mismatch.
	 */
	public void verifyUnknownUser(String password) {
		check(password, DUMMY);
		this.metrics.passwordCheck(Scheme.DUMMY, Result.MISMATCH);
	}

	/**
	 * The same argon2id run as {@link #verifyUnknownUser}, after a {@link Verification#UNUSABLE} stored hash (a disabled
	 * user's {@code $disabled$} marker, an unknown scheme) or a legacy HMAC mismatch (microseconds otherwise), so that
	 * every wrong password costs what an unknown user's costs. Not counted: {@link #verify} already counted this login.
	 */
	public void decoy(String password) {
		check(password, DUMMY);
	}

	/** A stored hash this verifier can check: what its string says, parsed. */
	private sealed interface StoredHash permits Argon2id, HmacSha256 {

		/** The hash the password must give. */
		byte[] expected();

	}

	private record Argon2id(int memory, int iterations, int lanes, byte[] salt, byte[] expected) implements StoredHash {

	}

	private record HmacSha256(byte[] salt, byte[] expected) implements StoredHash {

	}

	private static Scheme schemeOf(String storedHash) {
		return storedHash == null ? Scheme.UNKNOWN
				: storedHash.startsWith("$argon2id$") ? Scheme.ARGON2ID
						: storedHash.startsWith("$hmac-sha256$") ? Scheme.HMAC_SHA256 : Scheme.UNKNOWN;
	}

	/** The stored string parsed by the scheme its prefix names, or null when it is unusable. */
	private static StoredHash parse(String storedHash) {
		return switch (schemeOf(storedHash)) {
			case ARGON2ID -> parseArgon2id(storedHash);
			case HMAC_SHA256 -> parseHmacSha256(storedHash);
			default -> null;
		};
	}

	private static Verification check(String password, StoredHash stored) {
		if (stored == null) {
			return Verification.UNUSABLE;
		}
		byte[] secret = password.getBytes(StandardCharsets.UTF_8);
		byte[] actual = switch (stored) {
			case Argon2id argon2id -> argon2id(secret, argon2id);
			case HmacSha256 hmac -> hmacSha256(secret, hmac);
		};
		return MessageDigest.isEqual(actual, stored.expected()) ? Verification.MATCH : Verification.MISMATCH;
	}

	/** {@code $argon2id$v=19$m=<KiB>,t=<iterations>,p=<lanes>$<salt>$<hash>}, unpadded standard Base64. */
	private static Argon2id parseArgon2id(String stored) {
		String[] parts = stored.split("\\$", -1);
		if (parts.length != 6 || !parts[0].isEmpty() || !"v=19".equals(parts[2])) {
			return null;
		}
		String[] params = parts[3].split(",", -1);
		if (params.length != 3) {
			return null;
		}
		int memory = parameter(params[0], "m=");
		int iterations = parameter(params[1], "t=");
		int lanes = parameter(params[2], "p=");
		if (memory < 1 || iterations < 1 || lanes < 1 || memory > MAX_MEMORY_KIB || iterations > MAX_ITERATIONS
				|| lanes > MAX_LANES || memory < 8 * lanes) {
			return null;
		}
		byte[] salt = base64(parts[4], false);
		byte[] expected = base64(parts[5], false);
		if (salt == null || expected == null || salt.length < 8 || expected.length < 4) {
			return null;
		}
		return new Argon2id(memory, iterations, lanes, salt, expected);
	}

	private static byte[] argon2id(byte[] secret, Argon2id stored) {
		Argon2Parameters parameters = new Argon2Parameters.Builder(Argon2Parameters.ARGON2_id)
			.withVersion(Argon2Parameters.ARGON2_VERSION_13)
			.withMemoryAsKB(stored.memory())
			.withIterations(stored.iterations())
			.withParallelism(stored.lanes())
			.withSalt(stored.salt())
			.withBlockPool(Argon2Memory.pool())
			.build();
		Argon2BytesGenerator generator = new Argon2BytesGenerator();
		generator.init(parameters);
		byte[] actual = new byte[stored.expected().length];
		generator.generateBytes(secret, actual);
		return actual;
	}

	/** {@code $hmac-sha256$<salt>$<hash>}: hash = HMAC-SHA256(key = salt bytes, message = UTF-8 password). */
	private static HmacSha256 parseHmacSha256(String stored) {
		String[] parts = stored.split("\\$", -1);
		if (parts.length != 4 || !parts[0].isEmpty()) {
			return null;
		}
		byte[] salt = base64(parts[2], true);
		byte[] expected = base64(parts[3], true);
		if (salt == null || expected == null || salt.length == 0 || expected.length != 32) {
			return null;
		}
		return new HmacSha256(salt, expected);
	}

	private static byte[] hmacSha256(byte[] secret, HmacSha256 stored) {
		try {
			Mac mac = Mac.getInstance("HmacSHA256");
			mac.init(new SecretKeySpec(stored.salt(), "HmacSHA256"));
			return mac.doFinal(secret);
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
