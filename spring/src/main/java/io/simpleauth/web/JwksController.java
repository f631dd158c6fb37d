package io.simpleauth.web;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.nimbusds.jose.util.Base64URL;
import io.simpleauth.token.SigningKey;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** GET /.well-known/jwks.json: the one public key, serialised once at start. */
@RestController
public class JwksController {

	private final byte[] jwks;

	public JwksController(SigningKey signingKey) {
		this.jwks = JsonMapper.shared().writeValueAsBytes(Map.of("keys", List.of(publicJwk(signingKey))));
	}

	static Map<String, String> publicJwk(SigningKey key) {
		Map<String, String> jwk = new LinkedHashMap<>();
		jwk.put("kty", "RSA");
		jwk.put("use", "sig");
		jwk.put("alg", "RS256");
		jwk.put("kid", key.kid());
		jwk.put("n", Base64URL.encode(key.publicKey().getModulus()).toString());
		jwk.put("e", Base64URL.encode(key.publicKey().getPublicExponent()).toString());
		return jwk;
	}

	@GetMapping("/.well-known/jwks.json")
	public ResponseEntity<byte[]> jwks() {
		return ResponseEntity.ok()
			.contentType(MediaType.APPLICATION_JSON)
			.header(HttpHeaders.CACHE_CONTROL, "public, max-age=300")
			.body(this.jwks);
	}

}
