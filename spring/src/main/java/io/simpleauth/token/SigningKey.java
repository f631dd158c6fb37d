package io.simpleauth.token;

import java.math.BigInteger;
import java.security.KeyFactory;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.RSAPublicKeySpec;
import java.util.LinkedHashMap;
import java.util.Map;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.util.Base64URL;
import io.simpleauth.config.SettingsException;

import org.springframework.boot.ssl.pem.PemContent;

/**
 * The one RSA key the service signs with, parsed once at start. {@code kid} is the RFC 7638 JWK
 * thumbprint of the public key, so every stack given the same key names it the same.
 */
public record SigningKey(RSAPrivateCrtKey privateKey, RSAPublicKey publicKey, String kid) {

	public static final int MIN_BITS = 2048;

	/**
	 * Parses a PKCS#8 PEM with Spring Boot's {@link PemContent}; PKCS#1, encrypted, non-RSA and short keys are refused
	 * with a clear reason. The key comes from the first JCA provider's KeyFactory (ACCP once installed), so it stays a
	 * native key for signing.
	 */
	public static SigningKey fromPem(String pem) {
		// PemContent reads PKCS#1 too; the contract accepts PKCS#8 only.
		if (pem.contains("-----BEGIN RSA PRIVATE KEY-----")) {
			throw new SettingsException("JWT private key is PKCS#1 (BEGIN RSA PRIVATE KEY), which is refused; "
					+ "convert it to PKCS#8 with: openssl pkcs8 -topk8 -nocrypt -in key.pem -out key-pkcs8.pem");
		}
		if (pem.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
			throw new SettingsException("JWT private key is encrypted; an unencrypted PKCS#8 PEM is required");
		}
		if (!pem.contains("-----BEGIN PRIVATE KEY-----")) {
			throw new SettingsException("JWT private key is not a PKCS#8 PEM (no BEGIN PRIVATE KEY block)");
		}
		PrivateKey key;
		try {
			key = PemContent.of(pem).getPrivateKey();
		}
		catch (RuntimeException ex) {
			key = null;
		}
		if (key == null) {
			throw new SettingsException("JWT private key is not a valid PKCS#8 key");
		}
		if (!(key instanceof RSAPrivateCrtKey privateKey)) {
			String what = "EC".equals(key.getAlgorithm()) ? "an EC key" : "not an RSA key (" + key.getAlgorithm() + ")";
			throw new SettingsException("JWT private key is " + what + "; only RSA keys are accepted for RS256");
		}
		int bits = privateKey.getModulus().bitLength();
		if (bits < MIN_BITS) {
			throw new SettingsException(
					"JWT private key is RSA " + bits + " bits; at least " + MIN_BITS + " bits are required");
		}
		return fromPrivateKey(privateKey);
	}

	static SigningKey fromPrivateKey(RSAPrivateCrtKey privateKey) {
		try {
			RSAPublicKey publicKey = (RSAPublicKey) KeyFactory.getInstance("RSA")
				.generatePublic(new RSAPublicKeySpec(privateKey.getModulus(), privateKey.getPublicExponent()));
			String kid = new RSAKey.Builder(publicKey).build().computeThumbprint("SHA-256").toString();
			return new SigningKey(privateKey, publicKey, kid);
		}
		catch (NoSuchAlgorithmException | InvalidKeySpecException | JOSEException ex) {
			throw new SettingsException("JWT private key: cannot derive its public key (" + ex.getMessage() + ")");
		}
	}

	public int bits() {
		return this.publicKey.getModulus().bitLength();
	}

	public BigInteger modulus() {
		return this.publicKey.getModulus();
	}

	/** The key pair as a Nimbus JWK (private part included) for the encoder; never serialised. */
	public RSAKey toSigningJwk() {
		return new RSAKey.Builder(this.publicKey).privateKey(this.privateKey)
			.keyUse(KeyUse.SIGNATURE)
			.algorithm(JWSAlgorithm.RS256)
			.keyID(this.kid)
			.build();
	}

	/**
	 * The public JWK, members in the contract's order ({@code kty, use, alg, kid, n, e}, spec/README §3). Not Nimbus'
	 * {@code RSAKey.toPublicJWK().toJSONObject()}: it holds the same members in a HashMap, so the bytes would differ.
	 */
	public Map<String, String> publicJwk() {
		Map<String, String> jwk = new LinkedHashMap<>();
		jwk.put("kty", "RSA");
		jwk.put("use", "sig");
		jwk.put("alg", "RS256");
		jwk.put("kid", this.kid);
		jwk.put("n", Base64URL.encode(this.publicKey.getModulus()).toString());
		jwk.put("e", Base64URL.encode(this.publicKey.getPublicExponent()).toString());
		return jwk;
	}

	/** Never print key material. */
	@Override
	public String toString() {
		return "SigningKey[RSA " + bits() + ", kid=" + this.kid + "]";
	}

}
