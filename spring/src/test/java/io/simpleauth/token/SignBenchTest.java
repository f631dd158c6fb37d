package io.simpleauth.token;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.nimbusds.jwt.SignedJWT;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.simpleauth.Vectors;
import io.simpleauth.config.Settings;
import io.simpleauth.metrics.Metrics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SignBenchTest {

	/** The bench's signer, built as SignBench builds it, for every key type. */
	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "dev-rsa-2048.pem", "dev-p256.pem", "dev-ed25519.pem" })
	void aShortRunMakesTokenPairsThatVerify(String keyFile) throws Exception {
		Settings settings = Vectors.settings(Map.of("JWT_PRIVATE_KEY_FILE", Vectors.file("keys/" + keyFile).toString()));
		KeySet keys = Vectors.keySet(settings);
		Metrics metrics = new Metrics(new SimpleMeterRegistry());
		TokenSigner signer = new TokenSigner(new KeyRing(keys, settings, metrics), settings, metrics);
		List<TokenPair> made = new ArrayList<>();
		SignBench.Result result = SignBench.measure(() -> {
			TokenPair pair = signer.issue(SignBench.SAMPLE_USER, settings.defaultClientId());
			made.add(pair);
			return pair;
		}, 0.2);

		assertThat(result.tokenPairs()).isPositive().isEqualTo(made.size());
		assertThat(result.seconds()).isGreaterThanOrEqualTo(0.2).isLessThan(2);
		assertThat(result.threadCpuSeconds()).isPositive();
		assertThat(result.tokenChars())
			.isEqualTo(made.stream().mapToLong(p -> p.accessToken().length() + p.idToken().length()).sum());

		TokenPair last = made.get(made.size() - 1);
		String alg = keys.algorithm().getName();
		assertThat(TokenSignerTest.verifiesWithTheJdk(last.accessToken(), alg, keys.signingKey().publicKey())).isTrue();
		assertThat(TokenSignerTest.verifiesWithTheJdk(last.idToken(), alg, keys.signingKey().publicKey())).isTrue();
		SignedJWT access = SignedJWT.parse(last.accessToken());
		SignedJWT id = SignedJWT.parse(last.idToken());
		assertThat(access.getJWTClaimsSet().getSubject()).isEqualTo(SignBench.SAMPLE_USER.id().toString());
		assertThat(access.getJWTClaimsSet().getStringClaim("client_id")).isEqualTo("public");
		assertThat(id.getJWTClaimsSet().getStringClaim("at_hash")).isEqualTo(AtHash.of(last.accessToken(), keys.algorithm()));
	}

	@Test
	void theResultIsOneLineOfJson() {
		String json = new SignBench.Result(1234, 0.5, 0.49, 99).toJson("AmazonCorrettoCryptoProvider 2.5.0");
		assertThat(json).isEqualTo("{\"token_pairs\": 1234, \"seconds\": 0.500000, \"thread_cpu_seconds\": 0.490000, "
				+ "\"provider\": \"AmazonCorrettoCryptoProvider 2.5.0\"}");
	}

	@Test
	void theDurationMustBeOnePositiveFiniteNumber() {
		assertThat(SignBench.parseSeconds(new String[] { "5" })).isEqualTo(5.0);
		assertThat(SignBench.parseSeconds(new String[] { "0.5" })).isEqualTo(0.5);
		assertThat(SignBench.parseSeconds(new String[] { "1e1" })).isEqualTo(10.0);
		for (String bad : new String[] { "0", "-1", "0.0", "abc", "", "NaN", "Infinity", "1e400", "0x1p3", "5d", " 5" }) {
			assertThatIllegalArgumentException().as(bad).isThrownBy(() -> SignBench.parseSeconds(new String[] { bad }));
		}
		assertThatIllegalArgumentException().isThrownBy(() -> SignBench.parseSeconds(new String[0]));
		assertThatIllegalArgumentException().isThrownBy(() -> SignBench.parseSeconds(new String[] { "1", "2" }));
	}

}
