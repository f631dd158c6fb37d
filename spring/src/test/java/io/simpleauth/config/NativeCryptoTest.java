package io.simpleauth.config;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;

import com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider;
import io.simpleauth.Vectors;
import io.simpleauth.token.SigningAlgorithm;
import io.simpleauth.token.SigningKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ACCP signs all three algorithms on Linux (the build takes its jar for the platform, pom.xml): checked here, at run
 * time, rather than assumed — SHA256withRSA, SHA256withECDSAinP1363Format and Ed25519 each come from ACCP once it is installed.
 */
class NativeCryptoTest {

	private static final byte[] SIGNING_INPUT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2huIn0".getBytes(StandardCharsets.US_ASCII);

	@Test
	@EnabledOnOs(value = OS.LINUX, architectures = { "amd64", "aarch64" })
	void onLinuxTheNativeProviderSignsRs256AndGivesTheJdksBytes() throws Exception {
		String pem = Files.readString(Vectors.DEV_KEY);
		// The JDK's signature first, with the key parsed by the JDK.
		byte[] jdk = sign(SigningKey.fromPem(pem).privateKey(), Signature.getInstance("SHA256withRSA", "SunRsaSign"));

		assertThat(NativeCrypto.install()).isNull();
		assertThat(NativeCrypto.rsaProvider()).startsWith(AmazonCorrettoCryptoProvider.PROVIDER_NAME);
		assertThat(NativeCrypto.jdkSigningReason("SHA256withRSA")).as("no WARN line at start").isNull();
		SigningKey nativeKey = SigningKey.fromPem(pem);
		Signature signature = Signature.getInstance("SHA256withRSA");
		assertThat(signature.getProvider().getName()).isEqualTo(AmazonCorrettoCryptoProvider.PROVIDER_NAME);
		// RSASSA-PKCS1-v1_5 is deterministic: the same key and input must give the same bytes.
		assertThat(sign(nativeKey.privateKey(), signature)).isEqualTo(jdk);
		assertThat(nativeKey.kid()).isEqualTo(SigningKey.fromPem(pem).kid());
	}

	/**
	 * ES256: ACCP's ECDSA in the 64-byte R‖S form JOSE carries (the service's {@code SigningAlgorithm.ES256}), with
	 * ACCP's own key; the JDK verifies what it signs (ECDSA is randomised: no byte check).
	 */
	@Test
	@EnabledOnOs(value = OS.LINUX, architectures = { "amd64", "aarch64" })
	void onLinuxTheNativeProviderSignsEs256() throws Exception {
		assertThat(NativeCrypto.install()).isNull();
		String es256 = SigningAlgorithm.ES256.jcaSignature();
		assertThat(es256).isEqualTo("SHA256withECDSAinP1363Format");
		assertThat(NativeCrypto.signatureProvider(es256)).startsWith(AmazonCorrettoCryptoProvider.PROVIDER_NAME);
		assertThat(NativeCrypto.jdkSigningReason(es256)).isNull();
		SigningKey key = SigningKey.fromPem(Vectors.read("keys/dev-p256.pem"));
		assertThat(key.privateKey().getClass().getName()).as("a native key").startsWith("com.amazon.corretto");
		Signature signature = Signature.getInstance(es256);
		assertThat(signature.getProvider().getName()).isEqualTo(AmazonCorrettoCryptoProvider.PROVIDER_NAME);
		byte[] rs = sign(key.privateKey(), signature);
		assertThat(rs).hasSize(64);

		Signature jdk = Signature.getInstance(es256, "SunEC");
		jdk.initVerify(KeyFactory.getInstance("EC", "SunEC").generatePublic(new X509EncodedKeySpec(key.publicKey().getEncoded())));
		jdk.update(SIGNING_INPUT);
		assertThat(jdk.verify(rs)).isTrue();
	}

	/**
	 * EdDSA: ACCP 2.5 has Ed25519 (AWS-LC). The key is the JDK's (ACCP registers no Ed25519 KeyFactory by default),
	 * ACCP signs with it, and — Ed25519 being deterministic — gives exactly the JDK's bytes.
	 */
	@Test
	@EnabledOnOs(value = OS.LINUX, architectures = { "amd64", "aarch64" })
	void onLinuxTheNativeProviderSignsEd25519AndGivesTheJdksBytes() throws Exception {
		assertThat(NativeCrypto.install()).isNull();
		assertThat(NativeCrypto.signatureProvider("Ed25519")).startsWith(AmazonCorrettoCryptoProvider.PROVIDER_NAME);
		assertThat(NativeCrypto.jdkSigningReason("Ed25519")).isNull();
		SigningKey key = SigningKey.fromPem(Vectors.read("keys/dev-ed25519.pem"));
		Signature signature = Signature.getInstance("Ed25519");
		assertThat(signature.getProvider().getName()).isEqualTo(AmazonCorrettoCryptoProvider.PROVIDER_NAME);
		assertThat(sign(key.privateKey(), signature))
			.isEqualTo(sign(key.privateKey(), Signature.getInstance("Ed25519", "SunEC")))
			.hasSize(64);
	}

	private static byte[] sign(PrivateKey key, Signature signature) throws Exception {
		signature.initSign(key);
		signature.update(SIGNING_INPUT);
		return signature.sign();
	}

}
