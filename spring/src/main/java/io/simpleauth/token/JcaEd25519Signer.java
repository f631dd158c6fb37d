package io.simpleauth.token;

import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.impl.AlgorithmSupportMessage;
import com.nimbusds.jose.crypto.impl.EdDSAProvider;
import com.nimbusds.jose.util.Base64URL;

/**
 * A Nimbus {@link JWSSigner} for EdDSA with Ed25519 (RFC 8037 §3.1) over the JCA's {@code Signature "Ed25519"} —
 * Amazon Corretto Crypto Provider (AWS-LC) once installed, else the JDK's SunEC. Nimbus' own Ed25519Signer signs with
 * Google Tink instead, a second crypto library this service does not need: ACCP 2.5 has Ed25519 (checked at start,
 * see NativeCrypto), and signs far faster than SunEC (docs/stacks/spring.md, "Keys").
 */
final class JcaEd25519Signer extends EdDSAProvider implements JWSSigner {

	private final PrivateKey privateKey;

	JcaEd25519Signer(PrivateKey privateKey) {
		this.privateKey = privateKey;
	}

	@Override
	public Base64URL sign(JWSHeader header, byte[] signingInput) throws JOSEException {
		if (!supportedJWSAlgorithms().contains(header.getAlgorithm())) {
			throw new JOSEException(AlgorithmSupportMessage.unsupportedJWSAlgorithm(header.getAlgorithm(),
					supportedJWSAlgorithms()));
		}
		try {
			// Signature objects are not thread-safe: one per call, as Nimbus' own JCA signers do.
			Signature signature = getJCAContext().getProvider() != null
					? Signature.getInstance(SigningAlgorithm.EDDSA.jcaSignature(), getJCAContext().getProvider())
					: Signature.getInstance(SigningAlgorithm.EDDSA.jcaSignature());
			signature.initSign(this.privateKey);
			signature.update(signingInput);
			return Base64URL.encode(signature.sign());
		}
		catch (GeneralSecurityException ex) {
			throw new JOSEException("Ed25519 signature failed: " + ex.getMessage(), ex);
		}
	}

}
