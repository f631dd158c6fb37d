package io.simpleauth;

import io.simpleauth.config.NativeCrypto;
import io.simpleauth.config.Settings;
import io.simpleauth.token.SigningKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.stereotype.Component;

/** The service's one start-up line: stack, version, address, pool size, kid, issuer. */
@Component
class StartupLog implements ApplicationListener<ApplicationReadyEvent> {

	private static final Logger log = LoggerFactory.getLogger(StartupLog.class);

	private final Settings settings;

	private final SigningKey key;

	StartupLog(Settings settings, SigningKey key) {
		this.settings = settings;
		this.key = key;
	}

	@Override
	public void onApplicationEvent(ApplicationReadyEvent event) {
		int port = event.getApplicationContext() instanceof WebServerApplicationContext web
				? web.getWebServer().getPort() : this.settings.port();
		log.info("simple-auth spring {} (Spring Boot {}, Java {}) listening on {}:{} pool_size={} kid={} issuer={} rsa={}",
				SimpleAuthApplication.version(), SpringBootVersion.getVersion(), Runtime.version().feature(),
				this.settings.host(), port, this.settings.poolSize(), this.key.kid(),
				this.settings.issuer(), NativeCrypto.rsaProvider());
		String jdkSigning = NativeCrypto.jdkSigningReason();
		if (jdkSigning != null) {
			log.warn("RSA signing uses the JDK's provider ({}), not Amazon Corretto Crypto Provider (native, about 3x faster): {}",
					NativeCrypto.rsaProvider(), jdkSigning);
		}
	}

}
