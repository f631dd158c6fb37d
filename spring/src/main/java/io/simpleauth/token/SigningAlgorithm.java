package io.simpleauth.token;

import org.springframework.security.oauth2.jose.jws.JwsAlgorithm;

/**
 * The three JWS algorithms the service signs with; the signing key's type decides which (spec/README §2). A Spring
 * Security {@link JwsAlgorithm}, so that it goes into a {@code JwsHeader} as it is: Spring's own
 * {@code SignatureAlgorithm} has no EdDSA.
 */
public enum SigningAlgorithm implements JwsAlgorithm {

	/** RSASSA-PKCS1-v1_5 with SHA-256, an RSA key of at least 2048 bits. */
	RS256("RS256", "SHA256withRSA", "SHA-256"),

	/**
	 * ECDSA on P-256 with SHA-256, asked of the provider in the 64-byte R‖S form the JWS carries (RFC 7518 §3.4), so
	 * that nothing is transcoded from DER.
	 */
	ES256("ES256", "SHA256withECDSAinP1363Format", "SHA-256"),

	/** Ed25519 (RFC 8037 §3.1); at_hash takes the left half of SHA-512. */
	EDDSA("EdDSA", "Ed25519", "SHA-512");

	private final String jwsName;

	private final String jcaSignature;

	private final String atHashDigest;

	SigningAlgorithm(String jwsName, String jcaSignature, String atHashDigest) {
		this.jwsName = jwsName;
		this.jcaSignature = jcaSignature;
		this.atHashDigest = atHashDigest;
	}

	/** The JWS {@code alg} value: RS256, ES256, EdDSA. */
	@Override
	public String getName() {
		return this.jwsName;
	}

	/** The JCA {@code Signature} algorithm the signature is made with. */
	public String jcaSignature() {
		return this.jcaSignature;
	}

	/** The JCA {@code MessageDigest} whose left half is at_hash (OIDC Core §3.1.3.6). */
	public String atHashDigest() {
		return this.atHashDigest;
	}

	@Override
	public String toString() {
		return this.jwsName;
	}

}
