package io.simpleauth.password;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import io.simpleauth.Vectors;
import io.simpleauth.password.PasswordVerifier.Outcome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

class PasswordVerifierTest {

	private final PasswordVerifier verifier = new PasswordVerifier();

	static Stream<Arguments> passwordVectors() {
		List<Arguments> cases = new ArrayList<>();
		for (JsonNode v : Vectors.json().get("passwords")) {
			Outcome expected = v.path("malformed").asBoolean(false) ? Outcome.MALFORMED
					: v.get("valid").asBoolean() ? Outcome.MATCH : Outcome.MISMATCH;
			cases.add(Arguments.of(v.get("name").stringValue(), v.get("password").stringValue(),
					v.get("hash").stringValue(), expected));
		}
		assertThat(cases).hasSizeGreaterThanOrEqualTo(20);
		return cases.stream();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("passwordVectors")
	void everySharedVector(String name, String password, String hash, Outcome expected) {
		assertThat(this.verifier.verify(password, hash)).as(name).isEqualTo(expected);
	}

	@Test
	void theDummyHashIsAWellFormedArgon2idHashWithTheDefaultsForNewUsers() {
		JsonNode defaults = Vectors.json().get("password_hash_defaults").get("argon2id");
		String params = "m=" + defaults.get("m").asInt() + ",t=" + defaults.get("t").asInt() + ",p="
				+ defaults.get("p").asInt();
		assertThat(PasswordVerifier.DUMMY_HASH).startsWith("$argon2id$v=19$" + params + "$");
		assertThat(this.verifier.verify("whatever", PasswordVerifier.DUMMY_HASH)).isEqualTo(Outcome.MISMATCH);
	}

	@Test
	void aNullHashIsMalformedNotACrash() {
		assertThat(this.verifier.verify("x", null)).isEqualTo(Outcome.MALFORMED);
	}

	@Test
	void absurdArgon2ParametersFromDataAreRefusedNotComputed() {
		String huge = "$argon2id$v=19$m=2000000000,t=2,p=1$/aNuSw+NVpEX1i/cSRL/0Q$7ANI+9Bn7BQexYE+jCxcw3Ys0DheKsm8wAf+7WstZAs";
		assertThat(this.verifier.verify("x", huge)).isEqualTo(Outcome.MALFORMED);
	}

}
