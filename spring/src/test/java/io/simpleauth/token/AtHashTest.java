package io.simpleauth.token;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import io.simpleauth.Vectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

class AtHashTest {

	static Stream<Arguments> atHashVectors() {
		List<JsonNode> vectors = new ArrayList<>();
		Vectors.json().get("at_hash").forEach(vectors::add);
		return vectors.stream()
			.map(v -> Arguments.of(v.get("alg").stringValue(), v.get("access_token").stringValue(),
					v.get("at_hash").stringValue()));
	}

	@ParameterizedTest(name = "{0} {1}")
	@MethodSource("atHashVectors")
	void matchesTheSharedVectors(String alg, String accessToken, String atHash) {
		assertThat(AtHash.of(accessToken, algorithm(alg))).isEqualTo(atHash);
	}

	@Test
	void theVectorsCoverEveryAlgorithm() {
		assertThat(atHashVectors().map(a -> (String) a.get()[0]).distinct())
			.containsExactlyInAnyOrder("RS256", "ES256", "EdDSA");
	}

	@Test
	void eddsaTakesHalfOfSha512() {
		assertThat(AtHash.of("abc", SigningAlgorithm.EDDSA)).hasSize(43); // 32 bytes, base64url without padding
		assertThat(AtHash.of("abc", SigningAlgorithm.RS256)).hasSize(22); // 16 bytes
	}

	static SigningAlgorithm algorithm(String jwsName) {
		return Stream.of(SigningAlgorithm.values()).filter(a -> a.getName().equals(jwsName)).findFirst().orElseThrow();
	}

}
