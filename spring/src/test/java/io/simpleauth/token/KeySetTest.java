package io.simpleauth.token;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.spec.RSAPublicKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import io.simpleauth.Vectors;
import io.simpleauth.config.Settings;
import io.simpleauth.config.SettingsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.ssl.pem.PemContent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The JWKS of a signing key and JWT_PUBLIC_KEYS_FILE (spec/README §3, §5), and the bundle's refusals. */
class KeySetTest {

	@TempDir
	Path dir;

	/** vectors.json's public_key_bundle: dev-rsa-2048.pem signing, dev-public-keys.pem published, kid once each. */
	@Test
	void theBundleJwksIsTheVectorsOne() {
		JsonNode bundle = Vectors.json().get("public_key_bundle");
		KeySet keys = KeySet.load(Vectors.settings(Map.of("JWT_PRIVATE_KEY_FILE",
				Vectors.file(bundle.get("signing_key").stringValue()).toString(), "JWT_PUBLIC_KEYS_FILE",
				Vectors.file(bundle.get("file").stringValue()).toString())));
		assertThat(JsonMapper.shared().readTree(keys.jwksJson())).isEqualTo(bundle.get("jwks"));
		List<String> kids = new ArrayList<>();
		bundle.get("kids").forEach(kid -> kids.add(kid.stringValue()));
		assertThat(keys.published()).extracting(VerificationKey::kid).containsExactlyElementsOf(kids);
	}

	/** The signing key first, then the bundle in file order; the bundle's copy of the signing key is left out. */
	@Test
	void theSigningKeyComesFirstAndEveryKidOnce() {
		KeySet keys = KeySet.load(Vectors.settings(Map.of("JWT_PRIVATE_KEY_FILE",
				Vectors.file("keys/dev-ed25519.pem").toString(), "JWT_PUBLIC_KEYS_FILE",
				Vectors.file("keys/dev-public-keys.pem").toString())));
		assertThat(keys.published()).extracting(k -> k.algorithm().getName())
			.containsExactly("EdDSA", "RS256", "RS256", "ES256");
		assertThat(keys.published().get(0).kid()).isEqualTo(Vectors.key("ed25519").get("kid").stringValue());
		JsonNode jwks = JsonMapper.shared().readTree(keys.jwksJson());
		for (JsonNode jwk : jwks.get("keys")) {
			String kid = jwk.get("kid").stringValue();
			JsonNode vector = Vectors.keys().stream().filter(k -> k.get("kid").stringValue().equals(kid)).findFirst().orElseThrow();
			assertThat(jwk).isEqualTo(vector.get("jwk"));
		}
	}

	@Test
	void withoutABundleTheJwksHasTheSigningKeyOnly() {
		KeySet keys = KeySet.load(Vectors.settings(Map.of("JWT_PRIVATE_KEY_FILE", Vectors.file("keys/dev-p256.pem").toString())));
		assertThat(JsonMapper.shared().readTree(keys.jwksJson()))
			.isEqualTo(JsonMapper.shared().createObjectNode().set("keys",
					JsonMapper.shared().createArrayNode().add(Vectors.key("p-256").get("jwk"))));
	}

	@Test
	void anEmptyBundleOrTextOutsideTheBlocksPublishesNothingMore() throws Exception {
		assertThat(published("")).hasSize(1);
		assertThat(published("# the next key goes here\n")).hasSize(1);
		assertThat(published("Ed25519 key of 2026-05 (café):\n" + Vectors.read("keys/dev-public-keys.pem")
				.split("(?<=-----END PUBLIC KEY-----\n)")[3] + "trailing words\n")).extracting(VerificationKey::kid)
			.containsExactly(Vectors.key("rsa-2048").get("kid").stringValue(), Vectors.key("ed25519").get("kid").stringValue());
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', value = { "p-384 | block 1 is an EC key on P-384",
			"private key block | block 2 is a PRIVATE KEY block", "not base64 | block 2 is not valid base64",
			"certificate | block 1 is a CERTIFICATE block", "no end | block 1 (BEGIN PUBLIC KEY) has no END line",
			"garbage der | block 1 is not a public key of an accepted type", "short rsa | block 1 is an RSA key of 1024 bits" })
	void aBundleWithABlockThatIsNotAnAcceptedPublicKeyIsRefused(String problem, String message) throws Exception {
		String pem = switch (problem) {
			case "p-384" -> Vectors.read("keys/invalid/public-ec-p384.pem");
			case "private key block" -> publicPem("dev-p256.pem") + Vectors.read("keys/dev-ed25519.pem");
			case "not base64" -> publicPem("dev-p256.pem") + "-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n";
			case "certificate" -> "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
			case "no end" -> "-----BEGIN PUBLIC KEY-----\nMIIB\n";
			case "garbage der" -> "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n";
			case "short rsa" -> publicPem("invalid/rsa-1024-pkcs8.pem");
			default -> throw new IllegalArgumentException(problem);
		};
		assertThatThrownBy(() -> published(pem)).isInstanceOf(SettingsException.class)
			.hasMessageStartingWith("JWT_PUBLIC_KEYS_FILE: " + message)
			.hasMessageNotContaining("!!!!")
			.hasMessageNotContaining("\n");
	}

	private List<VerificationKey> published(String bundle) throws Exception {
		Path file = this.dir.resolve("bundle.pem");
		Files.writeString(file, bundle, StandardCharsets.UTF_8);
		Settings settings = Vectors.settings(Map.of("JWT_PUBLIC_KEYS_FILE", file.toString()));
		return KeySet.load(settings).published();
	}

	/** The SPKI PEM of a spec key's public half (what `openssl pkey -pubout` writes). */
	static String publicPem(String keyFile) {
		String base64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
			.encodeToString(publicKeyOf(keyFile).getEncoded());
		return "-----BEGIN PUBLIC KEY-----\n" + base64 + "\n-----END PUBLIC KEY-----\n";
	}

	private static PublicKey publicKeyOf(String keyFile) {
		if (keyFile.equals("invalid/rsa-1024-pkcs8.pem")) {
			// Refused as a signing key; its public half from its CRT parameters.
			var key = (RSAPrivateCrtKey) PemContent.of(Vectors.read("keys/" + keyFile)).getPrivateKey();
			try {
				return KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(key.getModulus(), key.getPublicExponent()));
			}
			catch (GeneralSecurityException ex) {
				throw new IllegalStateException(ex);
			}
		}
		return SigningKey.fromPem(Vectors.read("keys/" + keyFile)).publicKey();
	}

}
