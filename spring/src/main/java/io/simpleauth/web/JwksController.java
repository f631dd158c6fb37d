package io.simpleauth.web;

import io.simpleauth.token.TokenSigner;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** GET /.well-known/jwks.json: the signer's JWK set, serialised once at start. */
@RestController
public class JwksController {

	private final byte[] jwks;

	public JwksController(TokenSigner signer) {
		this.jwks = JsonMapper.shared().writeValueAsBytes(signer.jwks());
	}

	@GetMapping("/.well-known/jwks.json")
	public ResponseEntity<byte[]> jwks() {
		return ResponseEntity.ok()
			.contentType(MediaType.APPLICATION_JSON)
			.header(HttpHeaders.CACHE_CONTROL, "public, max-age=300")
			.body(this.jwks);
	}

}
