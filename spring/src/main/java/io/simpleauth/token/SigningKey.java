package io.simpleauth.token;

import java.math.BigInteger;
import java.security.KeyFactory;
import java.security.NoSuchAlgorithmException;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.RSAPublicKeySpec;
import java.util.Base64;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.jwk.RSAKey;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x9.X9ObjectIdentifiers;

import io.simpleauth.config.InvalidSettingsException;

/**
 * The one RSA key the service signs with, parsed once at start. {@code kid} is the RFC 7638 JWK
 * thumbprint of the public key, so every stack given the same key names it the same.
 */
public record SigningKey(RSAPrivateCrtKey privateKey, RSAPublicKey publicKey, String kid) {

	public static final int MIN_BITS = 2048;

	private static final String BEGIN = "-----BEGIN PRIVATE KEY-----";

	private static final String END = "-----END PRIVATE KEY-----";

	/** Parses a PKCS#8 PEM; PKCS#1, encrypted, non-RSA and short keys are refused with a clear reason. */
	public static SigningKey fromPem(String pem) throws InvalidSettingsException {
		if (pem.contains("-----BEGIN RSA PRIVATE KEY-----")) {
			throw new InvalidSettingsException("JWT private key is PKCS#1 (BEGIN RSA PRIVATE KEY), which is refused; "
					+ "convert it to PKCS#8 with: openssl pkcs8 -topk8 -nocrypt -in key.pem -out key-pkcs8.pem");
		}
		if (pem.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
			throw new InvalidSettingsException("JWT private key is encrypted; an unencrypted PKCS#8 PEM is required");
		}
		int begin = pem.indexOf(BEGIN);
		int end = pem.indexOf(END);
		if (begin < 0 || end < begin) {
			throw new InvalidSettingsException("JWT private key is not a PKCS#8 PEM (no BEGIN PRIVATE KEY block)");
		}
		byte[] der;
		try {
			der = Base64.getMimeDecoder().decode(pem.substring(begin + BEGIN.length(), end));
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidSettingsException("JWT private key PEM has invalid Base64");
		}
		ASN1ObjectIdentifier algorithm;
		try {
			algorithm = PrivateKeyInfo.getInstance(der).getPrivateKeyAlgorithm().getAlgorithm();
		}
		catch (RuntimeException ex) {
			throw new InvalidSettingsException("JWT private key is not a valid PKCS#8 structure");
		}
		if (!PKCSObjectIdentifiers.rsaEncryption.equals(algorithm)) {
			String what = X9ObjectIdentifiers.id_ecPublicKey.equals(algorithm) ? "an EC key" : "not an RSA key";
			throw new InvalidSettingsException("JWT private key is " + what + " (OID " + algorithm.getId()
					+ "); only RSA keys are accepted for RS256");
		}
		RSAPrivateCrtKey privateKey;
		try {
			if (!(KeyFactory.getInstance("RSA")
				.generatePrivate(new PKCS8EncodedKeySpec(der)) instanceof RSAPrivateCrtKey crt)) {
				throw new InvalidSettingsException("JWT private key lacks its CRT parameters (public exponent)");
			}
			privateKey = crt;
		}
		catch (NoSuchAlgorithmException | InvalidKeySpecException ex) {
			throw new InvalidSettingsException("JWT private key is not a valid RSA PKCS#8 key");
		}
		int bits = privateKey.getModulus().bitLength();
		if (bits < MIN_BITS) {
			throw new InvalidSettingsException(
					"JWT private key is RSA " + bits + " bits; at least " + MIN_BITS + " bits are required");
		}
		return fromPrivateKey(privateKey);
	}

	static SigningKey fromPrivateKey(RSAPrivateCrtKey privateKey) throws InvalidSettingsException {
		try {
			RSAPublicKey publicKey = (RSAPublicKey) KeyFactory.getInstance("RSA")
				.generatePublic(new RSAPublicKeySpec(privateKey.getModulus(), privateKey.getPublicExponent()));
			String kid = new RSAKey.Builder(publicKey).build().computeThumbprint("SHA-256").toString();
			return new SigningKey(privateKey, publicKey, kid);
		}
		catch (NoSuchAlgorithmException | InvalidKeySpecException | JOSEException ex) {
			throw new InvalidSettingsException("JWT private key: cannot derive its public key (" + ex.getMessage() + ")");
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
			.keyUse(com.nimbusds.jose.jwk.KeyUse.SIGNATURE)
			.algorithm(com.nimbusds.jose.JWSAlgorithm.RS256)
			.keyID(this.kid)
			.build();
	}

	/** Never print key material. */
	@Override
	public String toString() {
		return "SigningKey[RSA " + bits() + ", kid=" + this.kid + "]";
	}

}
