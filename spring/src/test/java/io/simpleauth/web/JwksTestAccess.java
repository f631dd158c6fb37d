package io.simpleauth.web;

import java.util.Map;

import io.simpleauth.token.SigningKey;

/** Opens the package-private JWK builder to tests in other packages. */
public final class JwksTestAccess {

	private JwksTestAccess() {
	}

	public static Map<String, String> publicJwk(SigningKey key) {
		return JwksController.publicJwk(key);
	}

}
