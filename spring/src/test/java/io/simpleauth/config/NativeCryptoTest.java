package io.simpleauth.config;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.PrivateKey;
import java.security.Signature;

import com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider;
import io.simpleauth.Vectors;
import io.simpleauth.token.SigningKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import static org.assertj.core.api.Assertions.assertThat;

class NativeCryptoTest {

	private static final byte[] SIGNING_INPUT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2huIn0".getBytes(StandardCharsets.US_ASCII);

	/** The build takes ACCP's jar for its own platform (pom.xml), so on both Linux platforms the native library loads. */
	@Test
	@EnabledOnOs(value = OS.LINUX, architectures = { "amd64", "aarch64" })
	void onLinuxTheNativeProviderSignsAndGivesTheJdksBytes() throws Exception {
		String pem = Files.readString(Vectors.DEV_KEY);
		// The JDK's signature first, with the key parsed by the JDK.
		byte[] jdk = sign(SigningKey.fromPem(pem).privateKey(), Signature.getInstance("SHA256withRSA", "SunRsaSign"));

		assertThat(NativeCrypto.install()).isNull();
		assertThat(NativeCrypto.rsaProvider()).startsWith(AmazonCorrettoCryptoProvider.PROVIDER_NAME);
		assertThat(NativeCrypto.jdkSigningReason()).as("no WARN line at start").isNull();
		SigningKey nativeKey = SigningKey.fromPem(pem);
		Signature signature = Signature.getInstance("SHA256withRSA");
		assertThat(signature.getProvider().getName()).isEqualTo(AmazonCorrettoCryptoProvider.PROVIDER_NAME);
		// RSASSA-PKCS1-v1_5 is deterministic: the same key and input must give the same bytes.
		assertThat(sign(nativeKey.privateKey(), signature)).isEqualTo(jdk);
		assertThat(nativeKey.kid()).isEqualTo(SigningKey.fromPem(pem).kid());
	}

	private static byte[] sign(PrivateKey key, Signature signature) throws Exception {
		signature.initSign(key);
		signature.update(SIGNING_INPUT);
		return signature.sign();
	}

}
