package io.simpleauth.password;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.simpleauth.Vectors;
import io.simpleauth.metrics.Metrics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

class PasswordVerifierTest {

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final PasswordVerifier verifier = new PasswordVerifier(new Metrics(this.registry));

	static Stream<Arguments> passwordVectors() {
		List<Arguments> cases = new ArrayList<>();
		for (JsonNode v : Vectors.json().get("passwords")) {
			Verification expected = v.path("malformed").asBoolean(false) ? Verification.UNUSABLE
					: v.get("valid").asBoolean() ? Verification.MATCH : Verification.MISMATCH;
			cases.add(Arguments.of(v.get("name").stringValue(), v.get("password").stringValue(),
					v.get("hash").stringValue(), expected));
		}
		assertThat(cases).hasSizeGreaterThanOrEqualTo(20);
		return cases.stream();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("passwordVectors")
	void everySharedVector(String name, String password, String hash, Verification expected) {
		assertThat(this.verifier.verify(password, hash)).as(name).isEqualTo(expected);
	}

	/** The refresh grant asks the parser alone; the overload limit asks whether a check is the legacy HMAC. */
	@ParameterizedTest(name = "{0}")
	@MethodSource("passwordVectors")
	void isUsableAndIsLegacyFollowTheParserWithoutCountingAnything(String name, String password, String hash,
			Verification expected) {
		assertThat(this.verifier.isUsable(hash)).as(name).isEqualTo(expected != Verification.UNUSABLE);
		assertThat(this.verifier.isLegacy(hash)).as(name)
			.isEqualTo(expected != Verification.UNUSABLE && hash.startsWith("$hmac-sha256$"));
		assertThat(this.registry.find("simpleauth.password.checks").counters())
			.allSatisfy(counter -> assertThat(counter.count()).isZero());
	}

	@Test
	void disabledBrokenAndMissingHashesAreUnusableAndNotLegacy() {
		for (String hash : new String[] { "$disabled$2026-11-23T16:50:00Z", "$hmac-sha256$not base64!$x", "", null }) {
			assertThat(this.verifier.isUsable(hash)).as(hash).isFalse();
			assertThat(this.verifier.isLegacy(hash)).as(hash).isFalse();
		}
		assertThat(this.verifier.isUsable(JOHN_HASH)).isTrue();
		assertThat(this.verifier.isLegacy(JOHN_HASH)).isTrue();
		assertThat(this.verifier.isUsable(PasswordVerifier.DUMMY_HASH)).isTrue();
		assertThat(this.verifier.isLegacy(PasswordVerifier.DUMMY_HASH)).isFalse();
	}

	@Test
	void theDummyHashIsAWellFormedArgon2idHashWithTheDefaultsForNewUsers() {
		JsonNode defaults = Vectors.json().get("password_hash_defaults").get("argon2id");
		String params = "m=" + defaults.get("m").asInt() + ",t=" + defaults.get("t").asInt() + ",p="
				+ defaults.get("p").asInt();
		assertThat(PasswordVerifier.DUMMY_HASH).startsWith("$argon2id$v=19$" + params + "$");
		assertThat(this.verifier.verify("whatever", PasswordVerifier.DUMMY_HASH)).isEqualTo(Verification.MISMATCH);
	}

	@Test
	void aNullHashIsUnusableNotACrash() {
		assertThat(this.verifier.verify("x", null)).isEqualTo(Verification.UNUSABLE);
	}

	@Test
	void everyCheckIsCountedUnderTheSchemeItsPrefixNames() {
		this.verifier.verify("TopSecret0!", JOHN_HASH);
		this.verifier.verify("wrong", JOHN_HASH);
		this.verifier.verify("x", "$argon2id$v=19$m=19456,t=2,p=1$short");
		this.verifier.verify("x", "$hmac-sha256$not base64!$x");
		this.verifier.verify("x", "$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy");
		this.verifier.verify("x", null);
		this.verifier.verifyUnknownUser("x");
		assertThat(checks("hmac-sha256", "match")).isEqualTo(1);
		assertThat(checks("hmac-sha256", "mismatch")).isEqualTo(1);
		assertThat(checks("hmac-sha256", "unusable")).isEqualTo(1);
		assertThat(checks("argon2id", "unusable")).isEqualTo(1);
		assertThat(checks("unknown", "unusable")).isEqualTo(2);
		assertThat(checks("dummy", "mismatch")).isEqualTo(1);
		assertThat(checks("argon2id", "match") + checks("argon2id", "mismatch")).isZero();
	}

	private double checks(String scheme, String result) {
		return this.registry.get("simpleauth.password.checks").tag("scheme", scheme).tag("result", result).counter().count();
	}

	/** John Doe's stored hash (sql/seed.sql), password TopSecret0!. */
	private static final String JOHN_HASH = "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=";

	@Test
	void absurdArgon2ParametersFromDataAreRefusedNotComputed() {
		String huge = "$argon2id$v=19$m=2000000000,t=2,p=1$/aNuSw+NVpEX1i/cSRL/0Q$7ANI+9Bn7BQexYE+jCxcw3Ys0DheKsm8wAf+7WstZAs";
		assertThat(this.verifier.verify("x", huge)).isEqualTo(Verification.UNUSABLE);
	}

}
