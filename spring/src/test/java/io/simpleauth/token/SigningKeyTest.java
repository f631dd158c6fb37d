package io.simpleauth.token;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import io.simpleauth.Vectors;
import io.simpleauth.config.Settings;
import io.simpleauth.config.SettingsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SigningKeyTest {

	static Stream<Arguments> keyVectors() {
		List<Arguments> cases = new ArrayList<>();
		for (JsonNode k : Vectors.json().get("keys")) {
			cases.add(Arguments.of(k.get("file").stringValue(), k));
		}
		return cases.stream();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("keyVectors")
	void kidIsTheRfc7638ThumbprintAndTheJwkMatches(String file, JsonNode vector) throws Exception {
		SigningKey key = SigningKey.fromPem(Files.readString(Vectors.SPEC.resolve(file)));
		assertThat(key.kid()).isEqualTo(vector.get("kid").stringValue());
		assertThat(key.bits()).isEqualTo(vector.get("bits").asInt());
		Map<String, String> jwk = key.publicJwk();
		Map<String, String> expected = new java.util.LinkedHashMap<>();
		vector.get("jwk").properties().forEach(e -> expected.put(e.getKey(), e.getValue().stringValue()));
		assertThat(jwk).containsExactlyInAnyOrderEntriesOf(expected);
	}

	@Test
	void refusesPkcs1() {
		assertThatThrownBy(() -> load("invalid/rsa-2048-pkcs1.pem")).isInstanceOf(SettingsException.class)
			.hasMessageContaining("PKCS#1")
			.hasMessageContaining("key");
	}

	@Test
	void refusesKeysUnder2048Bits() {
		assertThatThrownBy(() -> load("invalid/rsa-1024-pkcs8.pem")).isInstanceOf(SettingsException.class)
			.hasMessageContaining("1024")
			.hasMessageContaining("2048");
	}

	@Test
	void refusesEcKeys() {
		assertThatThrownBy(() -> load("invalid/ec-p256-pkcs8.pem")).isInstanceOf(SettingsException.class)
			.hasMessageContaining("EC key");
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "not a pem", "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----\n",
			"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n" })
	void refusesGarbage(String pem) {
		assertThatThrownBy(() -> SigningKey.fromPem(pem)).isInstanceOf(SettingsException.class)
			.hasMessageContaining("key");
	}

	@Test
	void aMissingKeyNamesBothVariables() {
		assertThatThrownBy(() -> Settings.fromEnvironment(Map.of()).signingKeyPem()).isInstanceOf(SettingsException.class)
			.hasMessageContaining("JWT_PRIVATE_KEY_FILE")
			.hasMessageContaining("JWT_PRIVATE_KEY");
	}

	@Test
	void anUnreadableKeyFileIsNamed() {
		assertThatThrownBy(
				() -> Settings.fromEnvironment(Map.of("JWT_PRIVATE_KEY_FILE", "/nonexistent/key.pem")).signingKeyPem())
			.isInstanceOf(SettingsException.class)
			.hasMessageContaining("/nonexistent/key.pem");
	}

	@Test
	void anInlineKeyWithEscapedNewlinesIsAccepted() throws Exception {
		String pem = Files.readString(Vectors.DEV_KEY).replace("\n", "\\n");
		Settings settings = Settings.fromEnvironment(Map.of("JWT_PRIVATE_KEY", pem));
		assertThat(Vectors.signingKey(settings).kid()).isEqualTo("m4YVP9dvX4zvZjwlcXD3evbwulGzoPqegYYmF8XIZU0");
	}

	@Test
	void anInlineKeyWithRealNewlinesIsAcceptedAndTheFileWinsOverIt() throws Exception {
		String pem = Files.readString(Vectors.DEV_KEY);
		assertThat(Vectors.signingKey(Settings.fromEnvironment(Map.of("JWT_PRIVATE_KEY", pem))).kid())
			.isEqualTo("m4YVP9dvX4zvZjwlcXD3evbwulGzoPqegYYmF8XIZU0");
		Settings both = Settings.fromEnvironment(Map.of("JWT_PRIVATE_KEY", "not a key", "JWT_PRIVATE_KEY_FILE",
				Vectors.DEV_KEY.toString()));
		assertThat(Vectors.signingKey(both).kid()).isEqualTo("m4YVP9dvX4zvZjwlcXD3evbwulGzoPqegYYmF8XIZU0");
	}

	private static SigningKey load(String file) throws Exception {
		return SigningKey.fromPem(Files.readString(Vectors.SPEC.resolve("keys").resolve(file)));
	}

}
