package io.simpleauth.web;

import io.simpleauth.token.KeyRing;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** GET /.well-known/jwks.json: the JWK set of the keys in service, serialised once per key set. */
@RestController
public class JwksController {

	private final KeyRing keys;

	public JwksController(KeyRing keys) {
		this.keys = keys;
	}

	@GetMapping("/.well-known/jwks.json")
	public ResponseEntity<byte[]> jwks() {
		return ResponseEntity.ok()
			.contentType(MediaType.APPLICATION_JSON)
			.header(HttpHeaders.CACHE_CONTROL, "public, max-age=300")
			.body(this.keys.current().jwksJson());
	}

}
