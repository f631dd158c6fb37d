package io.simpleauth;

import io.simpleauth.config.NativeCrypto;
import io.simpleauth.config.Settings;
import io.simpleauth.token.KeySet;
import io.simpleauth.token.KeyRing;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.stereotype.Component;

/**
 * The service's one start-up line: stack, version, address, metrics port, pool size, kid, alg, issuer, signing provider.
 */
@Component
class StartupLog implements ApplicationListener<ApplicationReadyEvent> {

	private static final Logger log = LoggerFactory.getLogger(StartupLog.class);

	private final Settings settings;

	private final KeyRing keys;

	StartupLog(Settings settings, KeyRing keys) {
		this.settings = settings;
		this.keys = keys;
	}

	@Override
	public void onApplicationEvent(ApplicationReadyEvent event) {
		int port = event.getApplicationContext() instanceof WebServerApplicationContext web
				? web.getWebServer().getPort() : this.settings.port();
		KeySet keys = this.keys.current();
		String signature = keys.algorithm().jcaSignature();
		log.info("simple-auth spring {} (Spring Boot {}, Java {}) listening on {}:{} metrics port {} pool_size={} kid={} "
				+ "alg={} published_keys={} issuer={} provider={}", SimpleAuthApplication.version(),
				SpringBootVersion.getVersion(), Runtime.version().feature(), this.settings.host(), port,
				this.settings.metricsPort(), this.settings.poolSize(), keys.kid(),
				keys.algorithm(), keys.published().size(), this.settings.issuer(),
				NativeCrypto.signatureProvider(signature));
		String jdkSigning = NativeCrypto.jdkSigningReason(signature);
		if (jdkSigning != null) {
			log.warn("{} signing uses the JDK's provider ({}), not Amazon Corretto Crypto Provider (native, 3x to 60x faster): {}",
					keys.algorithm(), NativeCrypto.signatureProvider(signature), jdkSigning);
		}
	}

}
