package io.simpleauth.web;

import java.io.IOException;
import java.io.InputStream;

import io.simpleauth.token.TokenRequest;
import io.simpleauth.token.TokenResponse;
import io.simpleauth.token.TokenService;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * POST /token. The body is read here, not by a message converter, so the checks run in the order
 * spec/README fixes: Content-Type (415), size (413, chunked bodies included), parse (400), credentials.
 */
@RestController
public class TokenController {

	public static final int MAX_BODY_BYTES = 8192;

	private final TokenService tokens;

	public TokenController(TokenService tokens) {
		this.tokens = tokens;
	}

	@PostMapping("/token")
	public ResponseEntity<TokenResponse> token(HttpServletRequest request) {
		TokenRequestParser.Format format = TokenRequestParser.formatOf(request.getContentType());
		byte[] body = readBody(request);
		TokenRequest tokenRequest = TokenRequestParser.parse(format, body);
		TokenResponse response = this.tokens.passwordGrant(tokenRequest);
		return ResponseEntity.ok()
			.contentType(MediaType.APPLICATION_JSON)
			.cacheControl(CacheControl.noStore())
			.header(HttpHeaders.PRAGMA, "no-cache")
			.body(response);
	}

	/** At most {@value #MAX_BODY_BYTES} bytes, whether announced by Content-Length or sent chunked. */
	private static byte[] readBody(HttpServletRequest request) {
		if (request.getContentLengthLong() > MAX_BODY_BYTES) {
			throw OAuthException.payloadTooLarge(MAX_BODY_BYTES);
		}
		try {
			InputStream in = request.getInputStream();
			byte[] body = in.readNBytes(MAX_BODY_BYTES + 1);
			if (body.length > MAX_BODY_BYTES) {
				throw OAuthException.payloadTooLarge(MAX_BODY_BYTES);
			}
			return body;
		}
		catch (IOException ex) {
			throw OAuthException.invalidRequest("the request body could not be read");
		}
	}

}
