package io.simpleauth.token;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import io.simpleauth.config.SettingsException;

/**
 * {@code JWT_PUBLIC_KEYS_FILE}: a PEM bundle of {@code BEGIN PUBLIC KEY} (SubjectPublicKeyInfo) blocks, each an RSA
 * (at least 2048 bits), EC P-256 or Ed25519 key, published in the JWKS after the signing key (spec/README §5). Text
 * outside the blocks is ignored; a block of another kind (a certificate, a private key), one that is not base64 or
 * not a key of an accepted type refuses the whole file, naming the block by its number.
 */
public final class PublicKeyBundle {

	static final String VARIABLE = "JWT_PUBLIC_KEYS_FILE";

	private static final String BEGIN = "-----BEGIN ";

	private static final String DASHES = "-----";

	/** Key factories tried in turn on a block; the first that reads it decides its type. */
	private static final String[] KEY_TYPES = { "RSA", "EC", "EdDSA" };

	private PublicKeyBundle() {
	}

	/** The bundle's keys in file order, or a {@link SettingsException} naming the first block that is refused. */
	public static List<VerificationKey> parse(String pem) {
		List<VerificationKey> keys = new ArrayList<>();
		int at = pem.indexOf(BEGIN);
		int block = 0;
		while (at >= 0) {
			block++;
			int labelEnd = pem.indexOf(DASHES, at + BEGIN.length());
			String label = labelEnd < 0 ? "" : pem.substring(at + BEGIN.length(), labelEnd);
			if (labelEnd < 0 || label.contains("\n")) {
				throw refused(block, "has a malformed BEGIN line");
			}
			String end = "-----END " + label + DASHES;
			int bodyStart = labelEnd + DASHES.length();
			int endAt = pem.indexOf(end, bodyStart);
			if (endAt < 0) {
				throw refused(block, "(BEGIN " + label + ") has no END line");
			}
			if (!label.equals("PUBLIC KEY")) {
				throw refused(block, "is a " + label + " block, not a PUBLIC KEY (SubjectPublicKeyInfo) block");
			}
			keys.add(key(block, pem.substring(bodyStart, endAt)));
			at = pem.indexOf(BEGIN, endAt + end.length());
		}
		return keys;
	}

	private static VerificationKey key(int block, String base64) {
		byte[] der;
		try {
			der = Base64.getDecoder().decode(base64.replaceAll("\\s", ""));
		}
		catch (IllegalArgumentException ex) {
			throw refused(block, "is not valid base64");
		}
		PublicKey key = null;
		for (String type : KEY_TYPES) {
			try {
				key = KeyFactory.getInstance(type).generatePublic(new X509EncodedKeySpec(der));
				break;
			}
			catch (GeneralSecurityException | RuntimeException ex) {
				// not this type: try the next
			}
		}
		if (key == null) {
			throw refused(block, "is not a public key of an accepted type (" + VerificationKey.ACCEPTED + ")");
		}
		try {
			return VerificationKey.of(key);
		}
		catch (VerificationKey.KeyTypeException ex) {
			throw refused(block, "is " + ex.getMessage());
		}
	}

	private static SettingsException refused(int block, String why) {
		return new SettingsException(VARIABLE + ": block " + block + " " + why);
	}

}
