package io.simpleauth.token;

import java.security.PublicKey;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.EdECKey;
import java.security.interfaces.RSAPublicKey;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.util.Base64URL;

/**
 * A public key as the JWKS publishes it: its algorithm (the key's type decides it, spec/README §2), its {@code kid} —
 * the RFC 7638 thumbprint, so every stack given the same key names it the same — and its JWK. The signing key's own
 * public half is one, and so is every key of {@code JWT_PUBLIC_KEYS_FILE}.
 */
public record VerificationKey(SigningAlgorithm algorithm, PublicKey key, String kid, Map<String, String> jwk) {

	public static final int MIN_RSA_BITS = 2048;

	/** What the contract accepts, for the refusals. */
	static final String ACCEPTED = "accepted: RSA of at least " + MIN_RSA_BITS + " bits (RS256), EC P-256 (ES256), Ed25519 (EdDSA)";

	/** Length of an Ed25519 SubjectPublicKeyInfo: a 12-byte prefix, then the 32-byte public key (RFC 8410 §4). */
	private static final int ED25519_SPKI_LENGTH = 44;

	/**
	 * The key's algorithm, kid and JWK, or a {@link KeyTypeException} naming what the key is when the contract does not
	 * accept it (a short RSA key, another curve, Ed448, DSA, ...).
	 */
	public static VerificationKey of(PublicKey key) {
		if (key instanceof RSAPublicKey rsa) {
			int bits = rsa.getModulus().bitLength();
			if (bits < MIN_RSA_BITS) {
				throw new KeyTypeException("an RSA key of " + bits + " bits; at least " + MIN_RSA_BITS + " bits are required");
			}
			return published(SigningAlgorithm.RS256, key, new RSAKey.Builder(rsa).build(), "n",
					Base64URL.encode(rsa.getModulus()).toString(), "e", Base64URL.encode(rsa.getPublicExponent()).toString());
		}
		if (key instanceof ECPublicKey ec) {
			Curve curve = Curve.forECParameterSpec(ec.getParams());
			if (!Curve.P_256.equals(curve)) {
				throw new KeyTypeException("an EC key on " + (curve != null ? curve.getName() : "an unnamed curve")
						+ " (" + ACCEPTED + ")");
			}
			ECKey jwk = new ECKey.Builder(Curve.P_256, ec).build();
			return published(SigningAlgorithm.ES256, key, jwk, "crv", "P-256", "x", jwk.getX().toString(), "y",
					jwk.getY().toString());
		}
		if (key instanceof EdECKey ed) {
			String curve = ed.getParams().getName();
			byte[] spki = key.getEncoded();
			if (!"Ed25519".equalsIgnoreCase(curve) || spki == null || spki.length != ED25519_SPKI_LENGTH) {
				throw new KeyTypeException("an " + curve + " key (" + ACCEPTED + ")");
			}
			Base64URL x = Base64URL.encode(Arrays.copyOfRange(spki, spki.length - 32, spki.length));
			return published(SigningAlgorithm.EDDSA, key, new OctetKeyPair.Builder(Curve.Ed25519, x).build(), "crv",
					"Ed25519", "x", x.toString());
		}
		throw new KeyTypeException("a " + key.getAlgorithm() + " key (" + ACCEPTED + ")");
	}

	/** The JWK in the contract's member order: kty, use, alg, kid, then the key's own members (spec/README §3). */
	private static VerificationKey published(SigningAlgorithm algorithm, PublicKey key, JWK thumbprinted,
			String... members) {
		String kid;
		try {
			kid = thumbprinted.computeThumbprint("SHA-256").toString();
		}
		catch (JOSEException ex) {
			throw new IllegalStateException("SHA-256 unavailable", ex);
		}
		Map<String, String> jwk = new LinkedHashMap<>();
		jwk.put("kty", thumbprinted.getKeyType().getValue());
		jwk.put("use", "sig");
		jwk.put("alg", algorithm.getName());
		jwk.put("kid", kid);
		for (int i = 0; i < members.length; i += 2) {
			jwk.put(members[i], members[i + 1]);
		}
		return new VerificationKey(algorithm, key, kid, Collections.unmodifiableMap(jwk));
	}

	@Override
	public String toString() {
		return "VerificationKey[" + this.algorithm + ", kid=" + this.kid + "]";
	}

	/** A key of a type the contract does not accept; the message says what it is, for "JWT ... is <message>". */
	public static final class KeyTypeException extends IllegalArgumentException {

		KeyTypeException(String message) {
			super(message);
		}

	}

}
