package io.simpleauth.token;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.simpleauth.Vectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;

import org.springframework.security.oauth2.jose.jws.SignatureAlgorithm;
import org.springframework.security.oauth2.jwt.JwsHeader;
import org.springframework.security.oauth2.jwt.JwtClaimsSet;
import org.springframework.security.oauth2.jwt.JwtEncoder;
import org.springframework.security.oauth2.jwt.JwtEncoderParameters;
import org.springframework.security.oauth2.jwt.JwtEncodingException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class JcaJwtEncoderTest {

	private static final Instant NOW = Instant.parse("2026-01-02T03:04:05Z");

	/** Each thread keeps a Signature bound to the key: many threads at once, every token of each verifies. */
	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "rsa-2048", "p-256", "ed25519" })
	void tokensSignedOnManyThreadsAtOnceAllVerify(String type) throws Exception {
		JsonNode vector = Vectors.key(type);
		SigningKey key = SigningKey.fromPem(Vectors.read(vector.get("file").stringValue()));
		JwtEncoder encoder = key.jwtEncoder();
		JwsHeader header = JwsHeader.with(key.algorithm()).type("JWT").keyId(key.kid()).build();
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			List<Callable<List<String>>> jobs = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				String subject = "user-" + t;
				jobs.add(() -> {
					List<String> tokens = new ArrayList<>();
					for (int i = 0; i < 25; i++) {
						JwtClaimsSet claims = JwtClaimsSet.builder()
							.issuer("https://issuer.test")
							.subject(subject)
							.claim("n", i)
							.issuedAt(NOW)
							.expiresAt(NOW.plusSeconds(900))
							.build();
						tokens.add(encoder.encode(JwtEncoderParameters.from(header, claims)).getTokenValue());
					}
					return tokens;
				});
			}
			int t = 0;
			for (Future<List<String>> done : threads.invokeAll(jobs)) {
				int i = 0;
				for (String token : done.get()) {
					assertThat(TokenSignerTest.verifiesWithTheJdk(token, key.algorithm().getName(), key.publicKey()))
						.as("token %d of thread %d", i, t)
						.isTrue();
					JsonNode claims = TokenSignerTest.part(token, 1);
					assertThat(claims.get("sub").stringValue()).isEqualTo("user-" + t);
					assertThat(claims.get("n").asInt()).isEqualTo(i);
					// The issuer as its text, instants as seconds.
					assertThat(claims.get("iss").stringValue()).isEqualTo("https://issuer.test");
					assertThat(claims.get("iat").isIntegralNumber()).isTrue();
					assertThat(claims.get("iat").asLong()).isEqualTo(NOW.getEpochSecond());
					i++;
				}
				t++;
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	/** A header naming another algorithm than the key's is refused, not signed with the key's. */
	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "rsa-2048", "p-256", "ed25519" })
	void aHeaderOfAnotherAlgorithmIsRefused(String type) {
		SigningKey key = SigningKey.fromPem(Vectors.read(Vectors.key(type).get("file").stringValue()));
		SignatureAlgorithm other = key.algorithm() == SigningAlgorithm.RS256 ? SignatureAlgorithm.ES256
				: SignatureAlgorithm.RS256;
		JwtClaimsSet claims = JwtClaimsSet.builder().subject("someone").issuedAt(NOW).build();
		assertThatExceptionOfType(JwtEncodingException.class)
			.isThrownBy(() -> key.jwtEncoder().encode(JwtEncoderParameters.from(JwsHeader.with(other).build(), claims)))
			.withMessageContaining(key.algorithm().getName());
	}

}
