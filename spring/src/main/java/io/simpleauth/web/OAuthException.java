package io.simpleauth.web;

import org.springframework.http.HttpStatus;

/** A failure the contract names, answered as {"error","error_description"} with its status. */
public class OAuthException extends RuntimeException {

	public static final String INVALID_GRANT_DESCRIPTION = "invalid username or password";

	private final HttpStatus status;

	private final String error;

	private OAuthException(HttpStatus status, String error, String description) {
		// Expected outcomes, not bugs: no stack trace to fill (wrong passwords are common under load).
		super(description, null, false, false);
		this.status = status;
		this.error = error;
	}

	public static OAuthException invalidRequest(String description) {
		return new OAuthException(HttpStatus.BAD_REQUEST, "invalid_request", description);
	}

	public static OAuthException unsupportedGrantType() {
		return new OAuthException(HttpStatus.BAD_REQUEST, "unsupported_grant_type", "grant_type must be \"password\"");
	}

	/** Unknown user, wrong password and unusable stored hash alike: the same bytes. */
	public static OAuthException invalidGrant() {
		return new OAuthException(HttpStatus.BAD_REQUEST, "invalid_grant", INVALID_GRANT_DESCRIPTION);
	}

	public static OAuthException payloadTooLarge(int limit) {
		return new OAuthException(HttpStatus.CONTENT_TOO_LARGE, "invalid_request",
				"request body is larger than " + limit + " bytes");
	}

	public static OAuthException unsupportedMediaType() {
		return new OAuthException(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "invalid_request",
				"Content-Type must be application/json or application/x-www-form-urlencoded");
	}

	public HttpStatus status() {
		return this.status;
	}

	public String error() {
		return this.error;
	}

	public String description() {
		return getMessage();
	}

}
