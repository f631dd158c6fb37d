package io.simpleauth.web;

import java.io.IOException;
import java.io.InputStream;

import io.simpleauth.metrics.Metrics;
import io.simpleauth.token.GrantedTokens;
import io.simpleauth.token.TokenRequest;
import io.simpleauth.token.TokenService;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * POST /token (both grants) and POST /revoke. The body is read here, not by a message converter, so the checks run in
 * the order spec/README fixes: Content-Type (415), size (413, chunked bodies included), parse (400), then the grant.
 * Every answer to POST /token is counted: a 200 here, an error where {@link ApiExceptionHandler} maps it.
 */
@RestController
public class TokenController {

	public static final int MAX_BODY_BYTES = 8192;

	/** Request attribute: System.nanoTime() when this controller took the request, until its answer is counted. */
	static final String STARTED = TokenController.class.getName() + ".started";

	private final TokenService tokens;

	private final ClientAddress clientAddress;

	private final Metrics metrics;

	public TokenController(TokenService tokens, ClientAddress clientAddress, Metrics metrics) {
		this.tokens = tokens;
		this.clientAddress = clientAddress;
		this.metrics = metrics;
		metrics.expectTokenRequests(200, Metrics.NO_ERROR);
	}

	@PostMapping("/token")
	public ResponseEntity<byte[]> token(HttpServletRequest request) {
		request.setAttribute(STARTED, System.nanoTime());
		TokenRequestParser.Format format = TokenRequestParser.formatOf(request.getContentType());
		TokenRequest tokenRequest = TokenRequestParser.parse(format, readBody(request));
		GrantedTokens granted = switch (tokenRequest) {
			case TokenRequest.Password password -> this.tokens
				.passwordGrant(password, this.clientAddress.of(request))
				.orElseThrow(ApiError::invalidGrant);
			case TokenRequest.Refresh refresh -> this.tokens.refreshGrant(refresh)
				.orElseThrow(ApiError::invalidRefreshToken);
		};
		answered(this.metrics, request, 200, Metrics.NO_ERROR);
		return ResponseEntity.ok()
			.contentType(MediaType.APPLICATION_JSON)
			.cacheControl(CacheControl.noStore())
			.header(HttpHeaders.PRAGMA, "no-cache")
			.body(Json.bytes(TokenResponse.of(granted)));
	}

	/** RFC 7009: 200 with an empty body whatever the token was, so that the answer tells its holder nothing. */
	@PostMapping("/revoke")
	public ResponseEntity<Void> revoke(HttpServletRequest request) {
		TokenRequestParser.Format format = TokenRequestParser.formatOf(request.getContentType());
		this.tokens.revoke(TokenRequestParser.parseRevocation(format, readBody(request)));
		return ResponseEntity.ok().cacheControl(CacheControl.noStore()).build();
	}

	/** Counts the answer to a POST /token this controller took (once), and nothing for any other request. */
	static void answered(Metrics metrics, HttpServletRequest request, int status, String error) {
		if (request.getAttribute(STARTED) instanceof Long started) {
			request.removeAttribute(STARTED);
			metrics.tokenRequest(status, error, System.nanoTime() - started);
		}
	}

	/** At most {@value #MAX_BODY_BYTES} bytes, whether announced by Content-Length or sent chunked. */
	private static byte[] readBody(HttpServletRequest request) {
		if (request.getContentLengthLong() > MAX_BODY_BYTES) {
			throw ApiError.payloadTooLarge(MAX_BODY_BYTES);
		}
		try {
			InputStream in = request.getInputStream();
			byte[] body = in.readNBytes(MAX_BODY_BYTES + 1);
			if (body.length > MAX_BODY_BYTES) {
				throw ApiError.payloadTooLarge(MAX_BODY_BYTES);
			}
			return body;
		}
		catch (IOException ex) {
			throw ApiError.invalidRequest("the request body could not be read");
		}
	}

}
