package io.simpleauth.token;

import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.SignatureException;
import java.security.spec.X509EncodedKeySpec;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Map;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.simpleauth.Vectors;
import io.simpleauth.config.Settings;
import io.simpleauth.metrics.Metrics;
import io.simpleauth.user.User;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

class TokenSignerTest {

	private static final Instant NOW = Instant.parse("2026-01-02T03:04:05.678Z");

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final User john = new User(UUID.fromString("953b48eb-02ef-f93e-f582-e9b9ce4685b5"), "johndoe", "John Doe",
			"john@example.com", "unused");

	/** Every dev key: the key decides alg; kid, typ per token, the claim sets, at_hash by the algorithm's digest. */
	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "rsa-2048", "rsa-4096", "p-256", "ed25519" })
	void theTokenPairHasExactlyTheContractsHeadersAndClaims(String type) throws Exception {
		JsonNode vector = Vectors.key(type);
		Settings settings = settings(vector.get("file").stringValue());
		KeySet keys = KeySet.load(settings);
		TokenPair response = signer(keys, settings).issue(this.john, "mobile-app");
		assertThat(response.expiresIn()).isEqualTo(900);

		JsonNode accessHeader = part(response.accessToken(), 0);
		JsonNode access = part(response.accessToken(), 1);
		JsonNode idHeader = part(response.idToken(), 0);
		JsonNode id = part(response.idToken(), 1);

		for (JsonNode header : new JsonNode[] { accessHeader, idHeader }) {
			assertThat(header.propertyNames()).containsExactlyInAnyOrder("alg", "typ", "kid");
			assertThat(header.get("alg").stringValue()).isEqualTo(vector.get("alg").stringValue());
			assertThat(header.get("kid").stringValue()).isEqualTo(vector.get("kid").stringValue());
		}
		assertThat(accessHeader.get("typ").stringValue()).isEqualTo("at+jwt");
		assertThat(idHeader.get("typ").stringValue()).isEqualTo("JWT");
		assertThat(access.propertyNames()).containsExactlyInAnyOrder("iss", "aud", "sub", "iat", "exp", "sid", "jti",
				"client_id");
		assertThat(id.propertyNames()).containsExactlyInAnyOrder("iss", "aud", "sub", "iat", "exp", "sid", "jti", "name",
				"preferred_username", "email", "at_hash");

		for (JsonNode claims : new JsonNode[] { access, id }) {
			assertThat(claims.get("iss").stringValue()).isEqualTo("https://issuer.test");
			assertThat(claims.get("aud").isString()).as("aud is a plain string").isTrue();
			assertThat(claims.get("sub").stringValue()).isEqualTo(this.john.id().toString());
			assertThat(claims.get("iat").isIntegralNumber()).isTrue();
			assertThat(claims.get("iat").asLong()).isEqualTo(NOW.getEpochSecond());
			assertThat(claims.get("exp").isIntegralNumber()).isTrue();
			assertThat(claims.get("exp").asLong()).isEqualTo(NOW.getEpochSecond() + 900);
		}
		assertThat(access.get("client_id").stringValue()).isEqualTo("mobile-app");
		// The access token's audience is the resource (RFC 9068), the ID token's the client (OIDC Core §2).
		assertThat(access.get("aud").stringValue()).isEqualTo("test-api");
		assertThat(id.get("aud").stringValue()).isEqualTo("mobile-app");
		assertThat(id.get("sid").stringValue()).isEqualTo(access.get("sid").stringValue());
		assertThat(id.get("jti").stringValue()).isNotEqualTo(access.get("jti").stringValue());
		assertThat(id.get("name").stringValue()).isEqualTo("John Doe");
		assertThat(id.get("preferred_username").stringValue()).isEqualTo("johndoe");
		assertThat(id.get("email").stringValue()).isEqualTo("john@example.com");
		assertThat(id.get("at_hash").stringValue())
			.isEqualTo(AtHash.of(response.accessToken(), AtHashTest.algorithm(vector.get("alg").stringValue())))
			.hasSize(vector.get("at_hash_digest").stringValue().equals("sha512") ? 43 : 22);

		PublicKey publicKey = keys.signingKey().publicKey();
		assertThat(verifiesWithTheJdk(response.accessToken(), vector.get("alg").stringValue(), publicKey)).isTrue();
		assertThat(verifiesWithTheJdk(response.idToken(), vector.get("alg").stringValue(), publicKey)).isTrue();
		String tampered = response.accessToken().replaceFirst("\\.[^.]", ".x");
		assertThat(verifiesWithTheJdk(tampered, vector.get("alg").stringValue(), publicKey)).isFalse();
	}

	/** RFC 7518 §3.4: the ES256 signature is the 64-byte R‖S, not the DER the JCA makes. */
	@Test
	void anEs256SignatureIs64Bytes() {
		Settings settings = settings("keys/dev-p256.pem");
		TokenPair pair = signer(KeySet.load(settings), settings).issue(this.john, "public");
		assertThat(Base64.getUrlDecoder().decode(pair.accessToken().split("\\.")[2])).hasSize(64);
		assertThat(Base64.getUrlDecoder().decode(pair.idToken().split("\\.")[2])).hasSize(64);
	}

	@Test
	void everyPairIsOneSigningObservation() {
		Settings settings = settings("keys/dev-rsa-2048.pem");
		TokenSigner signer = signer(KeySet.load(settings), settings);
		signer.issue(this.john, "public");
		signer.issue(this.john, "public");
		assertThat(this.registry.get("simpleauth.token.signing.duration").timer().count()).isEqualTo(2);
	}

	@Test
	void sidAndJtiAreFreshOnEveryCall() {
		Settings settings = settings("keys/dev-ed25519.pem");
		TokenSigner signer = signer(KeySet.load(settings), settings);
		TokenPair first = signer.issue(this.john, "public");
		TokenPair second = signer.issue(this.john, "public");
		assertThat(part(first.accessToken(), 1).get("sid").stringValue())
			.isNotEqualTo(part(second.accessToken(), 1).get("sid").stringValue());
		assertThat(part(first.accessToken(), 1).get("jti").stringValue())
			.isNotEqualTo(part(second.accessToken(), 1).get("jti").stringValue());
	}

	/** The contract's bytes (spec/README §3): members in the order kty, use, alg, kid, n, e. */
	@Test
	void theJwkSetIsTheVectorsKeyInTheContractsOrder() {
		JsonNode expected = Vectors.key("rsa-2048").get("jwk");
		String json = new String(KeySet.load(settings("keys/dev-rsa-2048.pem")).jwksJson(), StandardCharsets.UTF_8);
		assertThat(json).isEqualTo("{\"keys\":[{\"kty\":\"RSA\",\"use\":\"sig\",\"alg\":\"RS256\",\"kid\":\""
				+ expected.get("kid").stringValue() + "\",\"n\":\"" + expected.get("n").stringValue()
				+ "\",\"e\":\"AQAB\"}]}");
	}

	/**
	 * Verifies a compact JWS with the JDK's own providers (SunRsaSign, SunEC), not the provider that signed: RS256 as
	 * SHA256withRSA, ES256 as R‖S (SHA256withECDSAinP1363Format), EdDSA as Ed25519.
	 */
	static boolean verifiesWithTheJdk(String jws, String alg, PublicKey key) throws Exception {
		String[] parts = jws.split("\\.");
		Signature signature = switch (alg) {
			case "RS256" -> Signature.getInstance("SHA256withRSA", "SunRsaSign");
			case "ES256" -> Signature.getInstance("SHA256withECDSAinP1363Format", "SunEC");
			case "EdDSA" -> Signature.getInstance("Ed25519", "SunEC");
			default -> throw new IllegalArgumentException(alg);
		};
		// The JDK's providers take keys of their own; ACCP's keys are translated through their encoding.
		PublicKey jdkKey = KeyFactory.getInstance(key.getAlgorithm(), alg.equals("RS256") ? "SunRsaSign" : "SunEC")
			.generatePublic(new X509EncodedKeySpec(key.getEncoded()));
		signature.initVerify(jdkKey);
		signature.update((parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
		try {
			return signature.verify(Base64.getUrlDecoder().decode(parts[2]));
		}
		catch (SignatureException ex) {
			return false;
		}
	}

	private Settings settings(String keyFile) {
		return Vectors.settings(Map.of("JWT_PRIVATE_KEY_FILE", Vectors.file(keyFile).toString(), "JWT_ISSUER",
				"https://issuer.test", "JWT_AUDIENCE", "test-api", "TOKEN_TTL_SECONDS", "900"));
	}

	private TokenSigner signer(KeySet keys, Settings settings) {
		Metrics metrics = new Metrics(this.registry);
		return new TokenSigner(new KeyRing(keys, settings, metrics), settings, metrics, Clock.fixed(NOW, ZoneOffset.UTC));
	}

	static JsonNode part(String jwt, int index) {
		String segment = jwt.split("\\.")[index];
		return JsonMapper.shared().readTree(new String(Base64.getUrlDecoder().decode(segment), StandardCharsets.UTF_8));
	}

}
