package io.simpleauth.token;

import java.nio.file.Files;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.EdECPrivateKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import io.simpleauth.Vectors;
import io.simpleauth.config.Settings;
import io.simpleauth.config.SettingsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every dev key against vectors.json (algorithm, kid, JWK), and every key the contract refuses. */
class SigningKeyTest {

	static Stream<Arguments> keyVectors() {
		return Vectors.keys().stream().map(k -> Arguments.of(k.get("type").stringValue(), k));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("keyVectors")
	void theKeyDecidesTheAlgorithmAndTheKidIsTheRfc7638Thumbprint(String type, JsonNode vector) {
		SigningKey key = SigningKey.fromPem(Vectors.read(vector.get("file").stringValue()));
		assertThat(key.algorithm().getName()).isEqualTo(vector.get("alg").stringValue());
		assertThat(key.algorithm().atHashDigest().replace("-", "").toLowerCase())
			.isEqualTo(vector.get("at_hash_digest").stringValue());
		assertThat(key.kid()).isEqualTo(vector.get("kid").stringValue());
		if (vector.has("bits")) {
			assertThat(key.bits()).isEqualTo(vector.get("bits").asInt());
		}
		assertThat(key.publicJwk()).containsExactlyInAnyOrderEntriesOf(members(vector.get("jwk")));
	}

	/** The contract's member order (spec/README §3): kty, use, alg, kid, then the key's own members. */
	@ParameterizedTest(name = "{0}")
	@CsvSource({ "rsa-2048, n e", "p-256, crv x y", "ed25519, crv x" })
	void theJwkMembersAreInTheContractsOrder(String type, String members) {
		SigningKey key = SigningKey.fromPem(Vectors.read(Vectors.key(type).get("file").stringValue()));
		List<String> expected = Stream.concat(Stream.of("kty", "use", "alg", "kid"), Stream.of(members.split(" "))).toList();
		assertThat(key.publicJwk().keySet()).containsExactlyElementsOf(expected);
	}

	@Test
	void rsaAndEcKeysAreTheFirstProvidersKeysEd25519TheJdks() {
		assertThat(load("dev-rsa-2048.pem").privateKey()).isInstanceOf(RSAPrivateCrtKey.class);
		assertThat(load("dev-p256.pem").privateKey()).isInstanceOf(ECPrivateKey.class);
		assertThat(load("dev-ed25519.pem").privateKey()).isInstanceOf(EdECPrivateKey.class);
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', value = { "rsa-2048-pkcs1.pem | PKCS#1", "rsa-1024-pkcs8.pem | 1024 bits",
			"ec-p256-sec1.pem | SEC 1", "ec-p384-pkcs8.pem | P-384", "ec-secp256k1-pkcs8.pem | secp256k1",
			"ed448-pkcs8.pem | Ed448" })
	void everyInvalidKeyIsRefusedNamingWhatItIs(String file, String what) {
		assertThatThrownBy(() -> load("invalid/" + file)).isInstanceOf(SettingsException.class)
			.hasMessageStartingWith("JWT private key is")
			.hasMessageContaining(what)
			.hasMessageNotContaining("\n");
	}

	@Test
	void aPublicKeyIsNoSigningKey() {
		assertThatThrownBy(() -> load("invalid/public-ec-p384.pem")).isInstanceOf(SettingsException.class)
			.hasMessageContaining("BEGIN PRIVATE KEY");
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "not a pem", "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----\n",
			"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n" })
	void refusesGarbage(String pem) {
		assertThatThrownBy(() -> SigningKey.fromPem(pem)).isInstanceOf(SettingsException.class)
			.hasMessageContaining("key")
			.hasMessageNotContaining("!!!")
			.hasMessageNotContaining("AAAA");
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

	@Test
	void toStringNamesTheKeyNotItsMaterial() {
		assertThat(load("dev-p256.pem")).hasToString("SigningKey[ES256, kid=T6NXbGynca0BSO4mILedIj_nMkaM4n102t-cJrZgE3I]");
		assertThat(load("dev-rsa-2048.pem").toString()).startsWith("SigningKey[RS256 2048, kid=");
	}

	static Map<String, String> members(JsonNode jwk) {
		Map<String, String> members = new LinkedHashMap<>();
		jwk.properties().forEach(e -> members.put(e.getKey(), e.getValue().stringValue()));
		return members;
	}

	private static SigningKey load(String file) {
		return SigningKey.fromPem(Vectors.read("keys/" + file));
	}

}
