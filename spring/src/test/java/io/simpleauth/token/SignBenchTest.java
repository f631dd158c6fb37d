package io.simpleauth.token;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jwt.SignedJWT;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.simpleauth.Vectors;
import io.simpleauth.config.Settings;
import io.simpleauth.metrics.Metrics;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SignBenchTest {

	private final Settings settings = Vectors.settings(Map.of());

	private final SigningKey key = Vectors.signingKey(this.settings);

	private final TokenSigner signer = new TokenSigner(new SigningConfig().jwtEncoder(this.key), this.key, this.settings,
			new Metrics(new SimpleMeterRegistry()));

	@Test
	void aShortRunMakesTokenPairsThatVerify() throws Exception {
		List<TokenPair> made = new ArrayList<>();
		SignBench.Result result = SignBench.measure(() -> {
			TokenPair pair = this.signer.issue(SignBench.SAMPLE_USER);
			made.add(pair);
			return pair;
		}, 0.2);

		assertThat(result.tokenPairs()).isPositive().isEqualTo(made.size());
		assertThat(result.seconds()).isGreaterThanOrEqualTo(0.2).isLessThan(2);
		assertThat(result.threadCpuSeconds()).isPositive();
		assertThat(result.tokenChars())
			.isEqualTo(made.stream().mapToLong(p -> p.accessToken().length() + p.idToken().length()).sum());

		RSASSAVerifier verifier = new RSASSAVerifier(this.key.publicKey());
		TokenPair last = made.get(made.size() - 1);
		SignedJWT access = SignedJWT.parse(last.accessToken());
		SignedJWT id = SignedJWT.parse(last.idToken());
		assertThat(access.verify(verifier)).isTrue();
		assertThat(id.verify(verifier)).isTrue();
		assertThat(access.getJWTClaimsSet().getSubject()).isEqualTo(SignBench.SAMPLE_USER.id().toString());
		assertThat(id.getJWTClaimsSet().getStringClaim("at_hash")).isEqualTo(AtHash.of(last.accessToken()));
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
