package io.simpleauth.config;

import java.security.NoSuchAlgorithmException;
import java.security.Provider;
import java.security.Signature;

import com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider;

/**
 * Puts Amazon Corretto Crypto Provider (AWS-LC, native) first in the JCA provider list, so that the two
 * signatures every token request needs run at AWS-LC speed rather than the JDK's: RSA-2048 about three times as
 * fast, and ACCP 2.5 also has {@code SHA256withECDSAinP1363Format} (ES256) and {@code Ed25519} (EdDSA), each an order
 * of magnitude faster than SunEC. akka, zio and Spring make the same choice. Must run before the signing key is
 * parsed: an RSA or EC key made by ACCP's {@code KeyFactory} stays a native key, so signing does not convert it on
 * every call (ACCP registers no Ed25519 KeyFactory by default; its Ed25519 signature takes the JDK's key).
 *
 * <p>
 * Its native library ships per platform; the build takes the jar for its own architecture (linux-x86_64 or
 * linux-aarch_64, pom.xml). Where it cannot be loaded the JDK's providers stay in charge and the start-up log says so.
 */
public final class NativeCrypto {

	private static volatile String unavailable;

	private NativeCrypto() {
	}

	/** Installs ACCP if its native library loads; returns why not otherwise (null when installed). */
	public static String install() {
		unavailable = tryInstall();
		return unavailable;
	}

	private static String tryInstall() {
		try {
			Throwable loadingError = AmazonCorrettoCryptoProvider.INSTANCE.getLoadingError();
			if (loadingError != null) {
				return String.valueOf(loadingError.getMessage());
			}
			AmazonCorrettoCryptoProvider.install();
			AmazonCorrettoCryptoProvider.INSTANCE.assertHealthy();
			return null;
		}
		catch (RuntimeException | LinkageError ex) {
			return ex.toString();
		}
	}

	/**
	 * Why {@code jcaSignature} (SHA256withRSA, SHA256withECDSAinP1363Format, Ed25519) is not signed by ACCP, or null
	 * when it is: the reason {@link #install} gave, or the provider that comes first for it all the same.
	 */
	public static String jdkSigningReason(String jcaSignature) {
		String why = unavailable;
		if (why != null) {
			return why;
		}
		String provider = signatureProvider(jcaSignature);
		return provider.startsWith(AmazonCorrettoCryptoProvider.PROVIDER_NAME + " ") ? null
				: provider + " comes first for " + jcaSignature;
	}

	/**
	 * The provider a {@code Signature.getInstance(jcaSignature)} gets — the one the service's signers use — for the
	 * start-up line and signbench: "AmazonCorrettoCryptoProvider 2.5.0".
	 */
	public static String signatureProvider(String jcaSignature) {
		try {
			Provider provider = Signature.getInstance(jcaSignature).getProvider();
			return provider.getName() + " " + provider.getVersionStr();
		}
		catch (NoSuchAlgorithmException ex) {
			return "none";
		}
	}

	/** The provider RS256 signing uses. */
	public static String rsaProvider() {
		return signatureProvider("SHA256withRSA");
	}

}
