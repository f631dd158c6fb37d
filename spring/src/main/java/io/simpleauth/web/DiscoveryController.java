package io.simpleauth.web;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.simpleauth.config.Settings;
import io.simpleauth.token.SigningAlgorithm;
import io.simpleauth.token.KeyRing;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * GET /.well-known/openid-configuration: OpenID Connect Discovery 1.0 §3 (and RFC 8414) metadata, exactly the members
 * of spec/README §3, so that a resource server configured with only the issuer URL (Spring Security's
 * {@code issuer-uri}) finds the JWKS. The document only changes with the signing key's algorithm: one per algorithm,
 * serialised at start, and the key set in service picks which.
 */
@RestController
public class DiscoveryController {

	static final String PATH = "/.well-known/openid-configuration";

	static final List<String> CLAIMS_SUPPORTED = List.of("iss", "aud", "sub", "iat", "exp", "sid", "jti", "client_id",
			"name", "preferred_username", "email", "at_hash");

	private final KeyRing keys;

	private final Map<SigningAlgorithm, byte[]> documents = new EnumMap<>(SigningAlgorithm.class);

	public DiscoveryController(KeyRing keys, Settings settings) {
		this.keys = keys;
		for (SigningAlgorithm algorithm : SigningAlgorithm.values()) {
			this.documents.put(algorithm, Json.bytes(document(settings.issuer(), algorithm)));
		}
	}

	/** The metadata for an issuer whose signing key uses {@code algorithm}, members in the contract's order. */
	static Map<String, Object> document(String issuer, SigningAlgorithm algorithm) {
		// "+" joins without doubling a '/': an issuer ending in '/' loses it before the path; `issuer` stays verbatim.
		String base = issuer.endsWith("/") ? issuer.substring(0, issuer.length() - 1) : issuer;
		Map<String, Object> document = new LinkedHashMap<>();
		document.put("issuer", issuer);
		document.put("token_endpoint", base + "/token");
		document.put("jwks_uri", base + "/.well-known/jwks.json");
		document.put("grant_types_supported", List.of("password", "refresh_token"));
		document.put("revocation_endpoint", base + "/revoke");
		document.put("revocation_endpoint_auth_methods_supported", List.of("none"));
		// No authorization endpoint, so no response type; the member is required, so it is present and empty.
		document.put("response_types_supported", List.of());
		document.put("subject_types_supported", List.of("public"));
		document.put("id_token_signing_alg_values_supported", List.of(algorithm.getName()));
		document.put("token_endpoint_auth_methods_supported", List.of("none"));
		document.put("claims_supported", CLAIMS_SUPPORTED);
		return document;
	}

	@GetMapping(PATH)
	public ResponseEntity<byte[]> openIdConfiguration() {
		return ResponseEntity.ok()
			.contentType(MediaType.APPLICATION_JSON)
			.header(HttpHeaders.CACHE_CONTROL, "public, max-age=300")
			.body(this.documents.get(this.keys.current().algorithm()));
	}

}
