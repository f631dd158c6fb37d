package io.simpleauth.token;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import io.simpleauth.Vectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

class AtHashTest {

	static Stream<Arguments> atHashVectors() {
		List<Arguments> cases = new ArrayList<>();
		for (JsonNode v : Vectors.json().get("at_hash")) {
			cases.add(Arguments.of(v.get("access_token").stringValue(), v.get("at_hash").stringValue()));
		}
		return cases.stream();
	}

	@ParameterizedTest
	@MethodSource("atHashVectors")
	void matchesTheSharedVectors(String accessToken, String atHash) {
		assertThat(AtHash.of(accessToken)).isEqualTo(atHash);
	}

}
