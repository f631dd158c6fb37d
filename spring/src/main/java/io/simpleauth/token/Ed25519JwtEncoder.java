package io.simpleauth.token;

import java.time.Instant;
import java.util.Date;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;

import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwsHeader;
import org.springframework.security.oauth2.jwt.JwtClaimsSet;
import org.springframework.security.oauth2.jwt.JwtEncoder;
import org.springframework.security.oauth2.jwt.JwtEncoderParameters;
import org.springframework.security.oauth2.jwt.JwtEncodingException;

/**
 * The {@link JwtEncoder} of an Ed25519 key: what {@code NimbusJwtEncoder} does for RS256 and ES256 — Nimbus' JWS
 * serialisation of the header and the claims — with a {@link JcaEd25519Signer}. {@code NimbusJwtEncoder} picks its
 * signer from a fixed factory whose Ed25519 signer needs Google Tink, so it cannot sign EdDSA here. The header has
 * {@code alg}, {@code typ} and {@code kid}, nothing else; instants are written as seconds, a one-valued {@code aud}
 * as the string it is.
 */
final class Ed25519JwtEncoder implements JwtEncoder {

	private final JWSSigner signer;

	Ed25519JwtEncoder(JWSSigner signer) {
		this.signer = signer;
	}

	@Override
	public Jwt encode(JwtEncoderParameters parameters) throws JwtEncodingException {
		JwsHeader headers = parameters.getJwsHeader();
		JwtClaimsSet claims = parameters.getClaims();
		if (headers == null || !SigningAlgorithm.EDDSA.getName().equals(headers.getAlgorithm().getName())) {
			throw new JwtEncodingException("An Ed25519 key signs EdDSA only");
		}
		JWSHeader.Builder header = new JWSHeader.Builder(JWSAlgorithm.EdDSA).keyID(headers.getKeyId());
		if (headers.getType() != null) {
			header.type(new JOSEObjectType(headers.getType()));
		}
		JWTClaimsSet.Builder body = new JWTClaimsSet.Builder();
		claims.getClaims().forEach((name, value) -> body.claim(name, value instanceof Instant instant ? Date.from(instant) : value));
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

}
