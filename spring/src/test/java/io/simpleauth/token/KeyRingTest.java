package io.simpleauth.token;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.simpleauth.Vectors;
import io.simpleauth.config.Settings;
import io.simpleauth.metrics.Metrics;
import io.simpleauth.user.User;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import sun.misc.Signal;

import static org.assertj.core.api.Assertions.assertThat;

/** SIGHUP key rotation (spec/README §5): a failed reload keeps the keys in service and counts; a good one swaps. */
class KeyRingTest {

	private static final User JOHN = new User(UUID.fromString("953b48eb-02ef-f93e-f582-e9b9ce4685b5"), "johndoe",
			"John Doe", "john@example.com", "unused");

	@TempDir
	Path dir;

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final Metrics metrics = new Metrics(this.registry);

	@Test
	void bothSeriesStartAtZero() throws Exception {
		keys(settingsOnFiles("dev-rsa-2048.pem", ""));
		assertThat(reloads("success")).isZero();
		assertThat(reloads("failure")).isZero();
	}

	@Test
	void aReloadThatFailsKeepsTheOldKeysAndCountsAFailure() throws Exception {
		Settings settings = settingsOnFiles("dev-rsa-2048.pem", "");
		KeyRing keys = keys(settings);
		KeySet before = keys.current();
		TokenSigner signer = new TokenSigner(keys, settings, this.metrics);

		// A key of another curve, a PEM that is no key, a bundle with a P-384 key, a key file gone: each refused.
		replace("key.pem", Vectors.read("keys/invalid/ec-p384-pkcs8.pem"));
		assertThat(keys.reload()).isFalse();
		replace("key.pem", "-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n");
		assertThat(keys.reload()).isFalse();
		replace("key.pem", Vectors.read("keys/dev-p256.pem"));
		replace("bundle.pem", Vectors.read("keys/invalid/public-ec-p384.pem"));
		assertThat(keys.reload()).isFalse();
		Files.delete(this.dir.resolve("key.pem"));
		replace("bundle.pem", "");
		assertThat(keys.reload()).isFalse();

		assertThat(keys.current()).isSameAs(before);
		assertThat(reloads("failure")).isEqualTo(4);
		assertThat(reloads("success")).isZero();
		String accessToken = signer.issue(JOHN, "public").accessToken();
		assertThat(TokenSignerTest.part(accessToken, 0).get("kid").stringValue()).isEqualTo(before.kid());
	}

	@Test
	void aGoodReloadSwapsSignerJwksAndAlgorithmInOneStep() throws Exception {
		Settings settings = settingsOnFiles("dev-rsa-2048.pem", "");
		KeyRing keys = keys(settings);
		TokenSigner signer = new TokenSigner(keys, settings, this.metrics);
		String oldKid = keys.current().kid();

		// The documented switch: the next key signs, the old public key moves to the bundle.
		replace("key.pem", Vectors.read("keys/dev-ed25519.pem"));
		replace("bundle.pem", KeySetTest.publicPem("dev-rsa-2048.pem"));
		assertThat(keys.reload()).isTrue();

		KeySet now = keys.current();
		assertThat(now.algorithm()).isEqualTo(SigningAlgorithm.EDDSA);
		assertThat(now.published()).extracting(VerificationKey::kid)
			.containsExactly(Vectors.key("ed25519").get("kid").stringValue(), oldKid);
		TokenPair pair = signer.issue(JOHN, "public");
		assertThat(TokenSignerTest.part(pair.idToken(), 0).get("alg").stringValue()).isEqualTo("EdDSA");
		assertThat(TokenSignerTest.verifiesWithTheJdk(pair.idToken(), "EdDSA", now.signingKey().publicKey())).isTrue();
		assertThat(TokenSignerTest.part(pair.idToken(), 1).get("at_hash").stringValue())
			.isEqualTo(AtHash.of(pair.accessToken(), SigningAlgorithm.EDDSA));
		assertThat(reloads("success")).isEqualTo(1);
		assertThat(reloads("failure")).isZero();
	}

	/** JWT_PRIVATE_KEY cannot change in a running process: a reload keeps it and reads the bundle again. */
	@Test
	void withAnInlineKeyAReloadReadsTheBundleAgain() throws Exception {
		replace("bundle.pem", "");
		Settings settings = Settings.fromEnvironment(Map.of("JWT_PRIVATE_KEY", Vectors.read("keys/dev-rsa-2048.pem"),
				"JWT_PUBLIC_KEYS_FILE", this.dir.resolve("bundle.pem").toString()));
		KeyRing keys = keys(settings);
		replace("bundle.pem", KeySetTest.publicPem("dev-ed25519.pem"));
		assertThat(keys.reload()).isTrue();
		assertThat(keys.current().published()).extracting(VerificationKey::kid)
			.containsExactly(Vectors.key("rsa-2048").get("kid").stringValue(), Vectors.key("ed25519").get("kid").stringValue());
	}

	/** The real signal, to this JVM: handled (the default would stop the process), and the keys are reloaded. */
	@Test
	@EnabledOnOs(OS.LINUX)
	void sighupReloadsAndDoesNotStopTheProcess() throws Exception {
		KeyRing keys = keys(settingsOnFiles("dev-rsa-2048.pem", ""));
		KeyReloadSignal signal = new KeyReloadSignal(keys);
		signal.start();
		replace("key.pem", Vectors.read("keys/dev-p256.pem"));
		Signal.raise(new Signal("HUP"));
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (reloads("success") < 1 && System.nanoTime() < deadline) {
			Thread.sleep(20);
		}
		assertThat(reloads("success")).isEqualTo(1);
		assertThat(keys.current().algorithm()).isEqualTo(SigningAlgorithm.ES256);
		assertThat(signal.isRunning()).isTrue();
	}

	private Settings settingsOnFiles(String keyFile, String bundle) throws Exception {
		replace("key.pem", Vectors.read("keys/" + keyFile));
		replace("bundle.pem", bundle);
		return Vectors.settings(Map.of("JWT_PRIVATE_KEY_FILE", this.dir.resolve("key.pem").toString(),
				"JWT_PUBLIC_KEYS_FILE", this.dir.resolve("bundle.pem").toString()));
	}

	private KeyRing keys(Settings settings) {
		return new KeyRing(KeySet.load(settings), settings, this.metrics);
	}

	/** As an operator's tooling does: write aside, then rename over. */
	private void replace(String name, String content) throws Exception {
		Path aside = this.dir.resolve(name + ".new");
		Files.writeString(aside, content);
		Files.move(aside, this.dir.resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
	}

	private double reloads(String result) {
		return this.registry.get("simpleauth.key.reloads").tag("result", result).counter().count();
	}

}
