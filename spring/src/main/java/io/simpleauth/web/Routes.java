package io.simpleauth.web;

import java.util.Map;

/**
 * The service's routes and the methods each answers, in one table: {@link MethodRulesFilter} answers every other
 * method on them with 405, and the {@code Allow} header of every 405 comes from here.
 */
final class Routes {

	static final String POST = "POST";

	static final String GET_HEAD = "GET, HEAD";

	/**
	 * Actuator's Prometheus endpoint (application.properties), served only on METRICS_PORT (see
	 * {@link MethodRulesFilter}): not a route of the public port.
	 */
	static final String METRICS = "/metrics";

	private static final Map<String, String> ALLOW = Map.of("/token", POST, "/revoke", POST, "/health", GET_HEAD,
			"/health/live", GET_HEAD, "/.well-known/jwks.json", GET_HEAD, DiscoveryController.PATH, GET_HEAD);

	private Routes() {
	}

	/** The {@code Allow} value of a route, or null for a path that is not one (→ 404). */
	static String allowFor(String path) {
		return path == null ? null : ALLOW.get(path);
	}

	/** Whether {@code method} (case-sensitive, as HTTP method tokens are) is answered on a route with this Allow. */
	static boolean permits(String allow, String method) {
		return allow == POST ? "POST".equals(method) : "GET".equals(method) || "HEAD".equals(method);
	}

}
