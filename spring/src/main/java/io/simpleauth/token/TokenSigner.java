package io.simpleauth.token;

import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;

import io.simpleauth.config.Settings;
import io.simpleauth.metrics.Metrics;
import io.simpleauth.user.User;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.security.oauth2.jwt.JwsHeader;
import org.springframework.security.oauth2.jwt.JwtClaimsSet;
import org.springframework.security.oauth2.jwt.JwtEncoderParameters;
import org.springframework.stereotype.Component;

/**
 * Issues token pairs: builds the claims of the access and ID tokens, the key set's JwtEncoder signs. Header {alg, typ,
 * kid} only — {@code typ} {@value KeySet#ACCESS_TOKEN_TYPE} on the access token (RFC 9068), {@value KeySet#ID_TOKEN_TYPE}
 * on the ID token; {@code aud} a plain string — the resource ({@code JWT_AUDIENCE}) on the access token, the client on
 * the ID token (OIDC Core §2), so that neither passes as the other; both tokens share iat, exp and sid. A pair is signed wholly with one key
 * set, whatever a concurrent SIGHUP reload does.
 */
@Component
public class TokenSigner {

	private final KeyRing keys;

	private final String issuer;

	private final String audience;

	private final long ttlSeconds;

	private final Clock clock;

	private final Metrics metrics;

	@Autowired
	public TokenSigner(KeyRing keys, Settings settings, Metrics metrics) {
		this(keys, settings, metrics, Clock.systemUTC());
	}

	TokenSigner(KeyRing keys, Settings settings, Metrics metrics, Clock clock) {
		this.keys = keys;
		this.metrics = metrics;
		this.issuer = settings.issuer();
		this.audience = settings.audience();
		this.ttlSeconds = settings.tokenTtlSeconds();
		this.clock = clock;
	}

	/** Both tokens for {@code user} in a session of their own (a fresh {@code sid}); see {@link #issue(User, String, UUID)}. */
	public TokenPair issue(User user, String clientId) {
		return issue(user, clientId, UUID.randomUUID());
	}

	/**
	 * Both tokens for {@code user} in the session {@code sid} (the refresh-token family), the access token naming
	 * {@code clientId} (already checked against the {@link io.simpleauth.config.ClientId} rule) in its
	 * {@code client_id}, the ID token in its {@code aud}, timed as one pair
	 * ({@code simpleauth_token_signing_duration_seconds}).
	 */
	public TokenPair issue(User user, String clientId, UUID session) {
		long started = System.nanoTime();
		KeySet keys = this.keys.current();
		Instant issuedAt = this.clock.instant().truncatedTo(ChronoUnit.SECONDS);
		Instant expiresAt = issuedAt.plusSeconds(this.ttlSeconds);
		String sid = session.toString();
		String subject = user.id().toString();

		JwtClaimsSet access = common(this.audience, subject, issuedAt, expiresAt, sid).claim("client_id", clientId)
			.build();
		String accessToken = sign(keys, keys.accessTokenHeader(), access);

		JwtClaimsSet id = common(clientId, subject, issuedAt, expiresAt, sid).claim("name", user.name())
			.claim("preferred_username", user.username())
			.claim("email", user.email())
			.claim("at_hash", AtHash.of(accessToken, keys.algorithm()))
			.build();
		String idToken = sign(keys, keys.idTokenHeader(), id);

		this.metrics.tokenPairSigned(System.nanoTime() - started);
		return new TokenPair(accessToken, idToken, this.ttlSeconds);
	}

	private JwtClaimsSet.Builder common(String audience, String subject, Instant issuedAt, Instant expiresAt,
			String sid) {
		return JwtClaimsSet.builder()
			.issuer(this.issuer)
			// A single audience: a plain string.
			.claim("aud", audience)
			.subject(subject)
			.issuedAt(issuedAt)
			.expiresAt(expiresAt)
			.claim("sid", sid)
			.id(UUID.randomUUID().toString());
	}

	private static String sign(KeySet keys, JwsHeader header, JwtClaimsSet claims) {
		return keys.encoder().encode(JwtEncoderParameters.from(header, claims)).getTokenValue();
	}

}
