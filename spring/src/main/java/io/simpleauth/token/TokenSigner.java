package io.simpleauth.token;

import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.simpleauth.config.Settings;
import io.simpleauth.metrics.Metrics;
import io.simpleauth.user.User;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.security.oauth2.jose.jws.SignatureAlgorithm;
import org.springframework.security.oauth2.jwt.JwsHeader;
import org.springframework.security.oauth2.jwt.JwtClaimsSet;
import org.springframework.security.oauth2.jwt.JwtEncoder;
import org.springframework.security.oauth2.jwt.JwtEncoderParameters;
import org.springframework.stereotype.Component;

/**
 * Issues token pairs: builds the claims of the access and ID tokens, the JwtEncoder signs. Header {alg, typ, kid}
 * only; {@code aud} a plain string; both tokens share iat, exp and sid. Also the JWK set that verifies them.
 */
@Component
public class TokenSigner {

	private final JwtEncoder encoder;

	private final JwsHeader header;

	private final String issuer;

	private final String audience;

	private final long ttlSeconds;

	private final Clock clock;

	private final Metrics metrics;

	private final Map<String, List<Map<String, String>>> jwks;

	@Autowired
	public TokenSigner(JwtEncoder encoder, SigningKey signingKey, Settings settings, Metrics metrics) {
		this(encoder, signingKey, settings, metrics, Clock.systemUTC());
	}

	TokenSigner(JwtEncoder encoder, SigningKey signingKey, Settings settings, Metrics metrics, Clock clock) {
		this.encoder = encoder;
		this.metrics = metrics;
		this.header = JwsHeader.with(SignatureAlgorithm.RS256).type("JWT").keyId(signingKey.kid()).build();
		this.issuer = settings.issuer();
		this.audience = settings.audience();
		this.ttlSeconds = settings.tokenTtlSeconds();
		this.clock = clock;
		this.jwks = Map.of("keys", List.of(signingKey.publicJwk()));
	}

	/** Both tokens, timed as one pair ({@code simpleauth_token_signing_duration_seconds}). */
	public TokenPair issue(User user) {
		long started = System.nanoTime();
		Instant issuedAt = this.clock.instant().truncatedTo(ChronoUnit.SECONDS);
		Instant expiresAt = issuedAt.plusSeconds(this.ttlSeconds);
		String sid = UUID.randomUUID().toString();
		String subject = user.id().toString();

		JwtClaimsSet access = common(subject, issuedAt, expiresAt, sid).build();
		String accessToken = sign(access);

		JwtClaimsSet id = common(subject, issuedAt, expiresAt, sid).claim("name", user.name())
			.claim("preferred_username", user.username())
			.claim("email", user.email())
			.claim("at_hash", AtHash.of(accessToken))
			.build();
		String idToken = sign(id);

		this.metrics.tokenPairSigned(System.nanoTime() - started);
		return new TokenPair(accessToken, idToken, this.ttlSeconds);
	}

	/** The JWK set (RFC 7517) with the one public key: {@code {"keys":[{kty, use, alg, kid, n, e}]}}. */
	public Map<String, List<Map<String, String>>> jwks() {
		return this.jwks;
	}

	private JwtClaimsSet.Builder common(String subject, Instant issuedAt, Instant expiresAt, String sid) {
		return JwtClaimsSet.builder()
			.issuer(this.issuer)
			// A single audience: the encoder writes a one-element audience as a plain string.
			.claim("aud", this.audience)
			.subject(subject)
			.issuedAt(issuedAt)
			.expiresAt(expiresAt)
			.claim("sid", sid)
			.id(UUID.randomUUID().toString());
	}

	private String sign(JwtClaimsSet claims) {
		return this.encoder.encode(JwtEncoderParameters.from(this.header, claims)).getTokenValue();
	}

}
