package io.simpleauth.token;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.EdECPrivateKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.interfaces.RSAPrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.ECPoint;
import java.security.spec.ECPublicKeySpec;
import java.security.spec.RSAPublicKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.HexFormat;
import java.util.Map;

import com.nimbusds.jose.jwk.Curve;
import io.simpleauth.config.SettingsException;
import org.bouncycastle.asn1.x9.X9ECParameters;
import org.bouncycastle.crypto.ec.CustomNamedCurves;
import org.bouncycastle.crypto.params.Ed25519PrivateKeyParameters;
import org.bouncycastle.math.ec.FixedPointCombMultiplier;

import org.springframework.boot.ssl.pem.PemContent;
import org.springframework.security.oauth2.jwt.JwtEncoder;

/**
 * The private key the service signs with and its public half. The key's type decides the algorithm (spec/README §2):
 * RSA of at least 2048 bits → RS256, EC P-256 → ES256, Ed25519 → EdDSA; any other key is refused with a clear reason.
 */
public record SigningKey(PrivateKey privateKey, VerificationKey verificationKey) {

	/** An Ed25519 SubjectPublicKeyInfo up to the 32 key bytes (RFC 8410 §4). */
	private static final byte[] ED25519_SPKI_PREFIX = HexFormat.of().parseHex("302a300506032b6570032100");

	/**
	 * Parses a PKCS#8 PEM with Spring Boot's {@link PemContent}; PKCS#1, SEC 1, encrypted keys and keys of a type the
	 * contract does not accept are refused with a clear reason. RSA and EC keys come from the first JCA provider's
	 * KeyFactory (ACCP once installed), so they stay native keys for signing; an Ed25519 key is the JDK's (ACCP
	 * registers no KeyFactory for it by default) and ACCP's Ed25519 signature takes it as it is.
	 */
	public static SigningKey fromPem(String pem) {
		// PemContent reads PKCS#1 and SEC 1 too; the contract accepts PKCS#8 only.
		if (pem.contains("-----BEGIN RSA PRIVATE KEY-----")) {
			throw new SettingsException("JWT private key is PKCS#1 (BEGIN RSA PRIVATE KEY), which is refused; "
					+ "convert it to PKCS#8 with: openssl pkcs8 -topk8 -nocrypt -in key.pem -out key-pkcs8.pem");
		}
		if (pem.contains("-----BEGIN EC PRIVATE KEY-----")) {
			throw new SettingsException("JWT private key is SEC 1 (BEGIN EC PRIVATE KEY), which is refused; "
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
			throw new SettingsException("JWT private key is not a valid PKCS#8 key of an accepted type ("
					+ VerificationKey.ACCEPTED + ")");
		}
		try {
			return new SigningKey(key, VerificationKey.of(publicKeyOf(key)));
		}
		catch (VerificationKey.KeyTypeException ex) {
			throw new SettingsException("JWT private key is " + ex.getMessage());
		}
	}

	/** The public half, derived from the private key (checked to be of an accepted type first). */
	private static PublicKey publicKeyOf(PrivateKey key) {
		try {
			if (key instanceof RSAPrivateCrtKey rsa) {
				return KeyFactory.getInstance("RSA")
					.generatePublic(new RSAPublicKeySpec(rsa.getModulus(), rsa.getPublicExponent()));
			}
			if (key instanceof RSAPrivateKey) {
				throw new VerificationKey.KeyTypeException("an RSA key without its CRT parameters; its public key cannot be derived");
			}
			if (key instanceof ECPrivateKey ec) {
				Curve curve = Curve.forECParameterSpec(ec.getParams());
				if (!Curve.P_256.equals(curve)) {
					throw new VerificationKey.KeyTypeException(
							"an EC key on " + (curve != null ? curve.getName() : "an unnamed curve") + " ("
									+ VerificationKey.ACCEPTED + ")");
				}
				// Q = d·G on P-256, with Bouncy Castle's curve arithmetic (the JCA has no API for it).
				X9ECParameters p256 = CustomNamedCurves.getByName("P-256");
				var q = new FixedPointCombMultiplier().multiply(p256.getG(), ec.getS()).normalize();
				ECPoint point = new ECPoint(q.getAffineXCoord().toBigInteger(), q.getAffineYCoord().toBigInteger());
				return KeyFactory.getInstance("EC").generatePublic(new ECPublicKeySpec(point, ec.getParams()));
			}
			if (key instanceof EdECPrivateKey ed) {
				String curve = ed.getParams().getName();
				byte[] raw = ed.getBytes().orElse(null);
				if (!"Ed25519".equalsIgnoreCase(curve) || raw == null || raw.length != 32) {
					throw new VerificationKey.KeyTypeException("an " + curve + " key (" + VerificationKey.ACCEPTED + ")");
				}
				byte[] publicKey = new Ed25519PrivateKeyParameters(raw, 0).generatePublicKey().getEncoded();
				byte[] spki = new byte[ED25519_SPKI_PREFIX.length + publicKey.length];
				System.arraycopy(ED25519_SPKI_PREFIX, 0, spki, 0, ED25519_SPKI_PREFIX.length);
				System.arraycopy(publicKey, 0, spki, ED25519_SPKI_PREFIX.length, publicKey.length);
				return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(spki));
			}
			throw new VerificationKey.KeyTypeException("a " + key.getAlgorithm() + " key (" + VerificationKey.ACCEPTED + ")");
		}
		catch (GeneralSecurityException ex) {
			throw new SettingsException("JWT private key: cannot derive its public key (" + ex.getMessage() + ")");
		}
	}

	public SigningAlgorithm algorithm() {
		return this.verificationKey.algorithm();
	}

	public String kid() {
		return this.verificationKey.kid();
	}

	public PublicKey publicKey() {
		return this.verificationKey.key();
	}

	/** The public JWK, members in the contract's order (spec/README §3). */
	public Map<String, String> publicJwk() {
		return this.verificationKey.jwk();
	}

	/** RSA only: the modulus length in bits. */
	public int bits() {
		return this.privateKey instanceof RSAPrivateCrtKey rsa ? rsa.getModulus().bitLength() : 0;
	}

	/** The encoder that signs with this key: {@link JcaJwtEncoder}, whatever the algorithm. */
	public JwtEncoder jwtEncoder() {
		return new JcaJwtEncoder(algorithm(), this.privateKey);
	}

	/** Never print key material. */
	@Override
	public String toString() {
		return "SigningKey[" + algorithm() + (bits() > 0 ? " " + bits() : "") + ", kid=" + kid() + "]";
	}

}
