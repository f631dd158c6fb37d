package io.simpleauth.token;

import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.oauth2.jwt.JwtEncoder;
import org.springframework.security.oauth2.jwt.NimbusJwtEncoder;

/** The JwtEncoder over the one signing key (the key itself is a bean registered at start, see SimpleAuthApplication). */
@Configuration(proxyBeanMethods = false)
public class SigningConfig {

	@Bean
	public JwtEncoder jwtEncoder(SigningKey signingKey) {
		return new NimbusJwtEncoder(new ImmutableJWKSet<>(new JWKSet(signingKey.toSigningJwk())));
	}

}
