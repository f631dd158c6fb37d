package io.simpleauth.token;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Map;
import java.util.UUID;

import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jwt.SignedJWT;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.simpleauth.Vectors;
import io.simpleauth.config.Settings;
import io.simpleauth.metrics.Metrics;
import io.simpleauth.user.User;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

class TokenSignerTest {

	private static final Instant NOW = Instant.parse("2026-01-02T03:04:05.678Z");

	private final Settings settings = Vectors.settings(
			Map.of("JWT_ISSUER", "https://issuer.test", "JWT_AUDIENCE", "test-api", "TOKEN_TTL_SECONDS", "900"));

	private final SigningKey key = Vectors.signingKey(this.settings);

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final TokenSigner signer = new TokenSigner(new SigningConfig().jwtEncoder(this.key), this.key,
			this.settings, new Metrics(this.registry), Clock.fixed(NOW, ZoneOffset.UTC));

	private final User john = new User(UUID.fromString("953b48eb-02ef-f93e-f582-e9b9ce4685b5"), "johndoe", "John Doe",
			"john@example.com", "unused");

	@Test
	void theTokenPairHasExactlyTheContractsHeadersAndClaims() throws Exception {
		TokenPair response = this.signer.issue(this.john);
		assertThat(response.expiresIn()).isEqualTo(900);

		JsonNode accessHeader = part(response.accessToken(), 0);
		JsonNode access = part(response.accessToken(), 1);
		JsonNode idHeader = part(response.idToken(), 0);
		JsonNode id = part(response.idToken(), 1);

		for (JsonNode header : new JsonNode[] { accessHeader, idHeader }) {
			assertThat(header.propertyNames()).containsExactlyInAnyOrder("alg", "typ", "kid");
			assertThat(header.get("alg").stringValue()).isEqualTo("RS256");
			assertThat(header.get("typ").stringValue()).isEqualTo("JWT");
			assertThat(header.get("kid").stringValue()).isEqualTo("m4YVP9dvX4zvZjwlcXD3evbwulGzoPqegYYmF8XIZU0");
		}
		assertThat(access.propertyNames()).containsExactlyInAnyOrder("iss", "aud", "sub", "iat", "exp", "sid", "jti");
		assertThat(id.propertyNames()).containsExactlyInAnyOrder("iss", "aud", "sub", "iat", "exp", "sid", "jti", "name",
				"preferred_username", "email", "at_hash");

		for (JsonNode claims : new JsonNode[] { access, id }) {
			assertThat(claims.get("iss").stringValue()).isEqualTo("https://issuer.test");
			assertThat(claims.get("aud").isString()).as("aud is a plain string").isTrue();
			assertThat(claims.get("aud").stringValue()).isEqualTo("test-api");
			assertThat(claims.get("sub").stringValue()).isEqualTo(this.john.id().toString());
			assertThat(claims.get("iat").isIntegralNumber()).isTrue();
			assertThat(claims.get("iat").asLong()).isEqualTo(NOW.getEpochSecond());
			assertThat(claims.get("exp").asLong()).isEqualTo(NOW.getEpochSecond() + 900);
		}
		assertThat(id.get("sid").stringValue()).isEqualTo(access.get("sid").stringValue());
		assertThat(id.get("jti").stringValue()).isNotEqualTo(access.get("jti").stringValue());
		assertThat(id.get("name").stringValue()).isEqualTo("John Doe");
		assertThat(id.get("preferred_username").stringValue()).isEqualTo("johndoe");
		assertThat(id.get("email").stringValue()).isEqualTo("john@example.com");
		assertThat(id.get("at_hash").stringValue()).isEqualTo(AtHash.of(response.accessToken()));

		RSASSAVerifier verifier = new RSASSAVerifier(this.key.publicKey());
		assertThat(SignedJWT.parse(response.accessToken()).verify(verifier)).isTrue();
		assertThat(SignedJWT.parse(response.idToken()).verify(verifier)).isTrue();
	}

	@Test
	void everyPairIsOneSigningObservation() {
		this.signer.issue(this.john);
		this.signer.issue(this.john);
		assertThat(this.registry.get("simpleauth.token.signing.duration").timer().count()).isEqualTo(2);
	}

	@Test
	void sidAndJtiAreFreshOnEveryCall() {
		TokenPair first = this.signer.issue(this.john);
		TokenPair second = this.signer.issue(this.john);
		assertThat(part(first.accessToken(), 1).get("sid").stringValue())
			.isNotEqualTo(part(second.accessToken(), 1).get("sid").stringValue());
		assertThat(part(first.accessToken(), 1).get("jti").stringValue())
			.isNotEqualTo(part(second.accessToken(), 1).get("jti").stringValue());
	}

	/** The contract's bytes (spec/README §3): members in the order kty, use, alg, kid, n, e. */
	@Test
	void theJwkSetIsTheVectorsKeyInTheContractsOrder() {
		JsonNode expected = Vectors.json().get("keys").get(0).get("jwk");
		String json = JsonMapper.shared().writeValueAsString(this.signer.jwks());
		assertThat(json).isEqualTo("{\"keys\":[{\"kty\":\"RSA\",\"use\":\"sig\",\"alg\":\"RS256\",\"kid\":\""
				+ expected.get("kid").stringValue() + "\",\"n\":\"" + expected.get("n").stringValue()
				+ "\",\"e\":\"AQAB\"}]}");
	}

	static JsonNode part(String jwt, int index) {
		String segment = jwt.split("\\.")[index];
		return JsonMapper.shared().readTree(new String(Base64.getUrlDecoder().decode(segment), StandardCharsets.UTF_8));
	}

}
