package io.simpleauth.token;

import java.net.URL;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.time.Instant;
import java.util.Date;
import java.util.Map;
import java.util.Set;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.jca.JCAContext;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;

import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwsHeader;
import org.springframework.security.oauth2.jwt.JwtClaimsSet;
import org.springframework.security.oauth2.jwt.JwtEncoder;
import org.springframework.security.oauth2.jwt.JwtEncoderParameters;
import org.springframework.security.oauth2.jwt.JwtEncodingException;

/**
 * The {@link JwtEncoder} of the one signing key, for RS256, ES256 and EdDSA alike: Nimbus' JWS serialisation of the
 * header and the claims, signed by a JCA {@code Signature} — Amazon Corretto Crypto Provider (AWS-LC) once installed,
 * else the JDK's.
 *
 * <p>
 * Not {@code NimbusJwtEncoder}, because its work per token is for a set of keys that may change: for every token it
 * selects the key from its JWK source, looks up its signer by the JWK (hashing the key), and its signers take a new
 * {@code Signature} and bind the key for every signature (ES256 in DER, then transcoded); nor can it sign EdDSA
 * without Google Tink. Here the key is fixed for the encoder's life ({@link KeySet} makes a new encoder when the keys
 * are reloaded), so each thread keeps one {@code Signature} bound to it — {@code sign()} leaves it ready for the next
 * token — and ES256 asks the provider for the 64-byte R‖S form JOSE wants (RFC 7518 §3.4).
 *
 * <p>
 * The header is {@code alg}, {@code typ} and {@code kid}, nothing else; instants are written as seconds, the issuer
 * as its text and a one-valued {@code aud} as the string it is.
 */
final class JcaJwtEncoder implements JwtEncoder {

	private final SigningAlgorithm algorithm;

	private final JWSAlgorithm jwsAlgorithm;

	private final ThreadLocal<Signature> signatures;

	private final JWSSigner signer;

	JcaJwtEncoder(SigningAlgorithm algorithm, PrivateKey privateKey) {
		this.algorithm = algorithm;
		this.jwsAlgorithm = JWSAlgorithm.parse(algorithm.getName());
		// Fails here, at start, rather than on the first token, if no provider signs the algorithm with this key.
		bind(algorithm, privateKey);
		this.signatures = ThreadLocal.withInitial(() -> bind(algorithm, privateKey));
		this.signer = new Signer();
	}

	private static Signature bind(SigningAlgorithm algorithm, PrivateKey privateKey) {
		try {
			Signature signature = Signature.getInstance(algorithm.jcaSignature());
			signature.initSign(privateKey);
			return signature;
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException(algorithm + " signing is not available: " + ex.getMessage(), ex);
		}
	}

	@Override
	public Jwt encode(JwtEncoderParameters parameters) throws JwtEncodingException {
		JwsHeader headers = parameters.getJwsHeader();
		JwtClaimsSet claims = parameters.getClaims();
		if (headers == null || !this.algorithm.getName().equals(headers.getAlgorithm().getName())) {
			throw new JwtEncodingException("This key signs " + this.algorithm + " only");
		}
		JWSHeader.Builder header = new JWSHeader.Builder(this.jwsAlgorithm).keyID(headers.getKeyId());
		if (headers.getType() != null) {
			header.type(new JOSEObjectType(headers.getType()));
		}
		JWTClaimsSet.Builder body = new JWTClaimsSet.Builder();
		for (Map.Entry<String, Object> claim : claims.getClaims().entrySet()) {
			body.claim(claim.getKey(), nimbusValue(claim.getValue()));
		}
		SignedJWT jwt = new SignedJWT(header.build(), body.build());
		try {
			jwt.sign(this.signer);
		}
		catch (JOSEException ex) {
			throw new JwtEncodingException("An error occurred while attempting to encode the Jwt: " + ex.getMessage(), ex);
		}
		return new Jwt(jwt.serialize(), claims.getIssuedAt(), claims.getExpiresAt(), headers.getHeaders(),
				claims.getClaims());
	}

	/** Spring keeps instants as {@link Instant} and the issuer as a {@link URL}; Nimbus writes a Date as seconds. */
	private static Object nimbusValue(Object value) {
		if (value instanceof Instant instant) {
			return Date.from(instant);
		}
		if (value instanceof URL url) {
			return url.toExternalForm();
		}
		return value;
	}

	/** The thread's {@code Signature}, already bound to the key, signs the JWS signing input. */
	private final class Signer implements JWSSigner {

		private final JCAContext context = new JCAContext();

		// Nimbus asks for it on every signature (JWSObject.sign checks the header's alg against it).
		private final Set<JWSAlgorithm> algorithms = Set.of(JcaJwtEncoder.this.jwsAlgorithm);

		@Override
		public Base64URL sign(JWSHeader header, byte[] signingInput) throws JOSEException {
			if (!JcaJwtEncoder.this.jwsAlgorithm.equals(header.getAlgorithm())) {
				throw new JOSEException("This key signs " + JcaJwtEncoder.this.algorithm + ", not " + header.getAlgorithm());
			}
			try {
				Signature signature = JcaJwtEncoder.this.signatures.get();
				signature.update(signingInput);
				return Base64URL.encode(signature.sign());
			}
			catch (GeneralSecurityException ex) {
				throw new JOSEException(JcaJwtEncoder.this.algorithm + " signature failed: " + ex.getMessage(), ex);
			}
		}

		@Override
		public Set<JWSAlgorithm> supportedJWSAlgorithms() {
			return this.algorithms;
		}

		@Override
		public JCAContext getJCAContext() {
			return this.context;
		}

	}

}
