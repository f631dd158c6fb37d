package io.simpleauth.web;

import java.util.List;

import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

/**
 * Every error answer of the contract: its status, error code, description and headers. Thrown by the web layer,
 * answered by {@link ApiExceptionHandler}; also built directly where an answer is not an exception (404, 405).
 */
public final class ApiError extends RuntimeException {

	public static final String INVALID_GRANT_DESCRIPTION = "invalid username or password";

	public static final String INVALID_REFRESH_TOKEN_DESCRIPTION = "invalid refresh token";

	public static final String TOO_MANY_FAILED_LOGINS_DESCRIPTION = "too many failed logins; try again later";

	private final HttpStatus status;

	private final ErrorCode code;

	private final HttpHeaders headers;

	private ApiError(HttpStatus status, ErrorCode code, String description) {
		this(status, code, description, HttpHeaders.EMPTY);
	}

	private ApiError(HttpStatus status, ErrorCode code, String description, HttpHeaders headers) {
		// Expected outcomes, not bugs: no stack trace to fill (wrong passwords are common under load).
		super(description, null, false, false);
		this.status = status;
		this.code = code;
		this.headers = headers;
	}

	public static ApiError invalidRequest(String description) {
		return new ApiError(HttpStatus.BAD_REQUEST, ErrorCode.INVALID_REQUEST, description);
	}

	public static ApiError unsupportedGrantType() {
		return new ApiError(HttpStatus.BAD_REQUEST, ErrorCode.UNSUPPORTED_GRANT_TYPE, "grant_type must be \"password\" or \"refresh_token\"");
	}

	/** Unknown user, wrong password and unusable stored hash alike: the same bytes. */
	public static ApiError invalidGrant() {
		return new ApiError(HttpStatus.BAD_REQUEST, ErrorCode.INVALID_GRANT, INVALID_GRANT_DESCRIPTION);
	}

	/** Every refused refresh — unknown, malformed, expired, used, revoked, another client's — alike: the same bytes. */
	public static ApiError invalidRefreshToken() {
		return new ApiError(HttpStatus.BAD_REQUEST, ErrorCode.INVALID_GRANT, INVALID_REFRESH_TOKEN_DESCRIPTION);
	}

	/** A lock of spec/README §8 (the username's or the client address's): 429, the same bytes for both. */
	public static ApiError tooManyFailedLogins(long retryAfterSeconds) {
		HttpHeaders headers = new HttpHeaders();
		headers.set(HttpHeaders.RETRY_AFTER, Long.toString(Math.max(1, retryAfterSeconds)));
		return new ApiError(HttpStatus.TOO_MANY_REQUESTS, ErrorCode.TEMPORARILY_UNAVAILABLE,
				TOO_MANY_FAILED_LOGINS_DESCRIPTION, headers);
	}

	public static ApiError payloadTooLarge(int limit) {
		return new ApiError(HttpStatus.CONTENT_TOO_LARGE, ErrorCode.INVALID_REQUEST,
				"request body is larger than " + limit + " bytes");
	}

	public static ApiError unsupportedMediaType() {
		return new ApiError(HttpStatus.UNSUPPORTED_MEDIA_TYPE, ErrorCode.INVALID_REQUEST,
				"Content-Type must be application/json or application/x-www-form-urlencoded");
	}

	public static ApiError notAcceptable() {
		return new ApiError(HttpStatus.NOT_ACCEPTABLE, ErrorCode.INVALID_REQUEST,
				"only application/json responses are available");
	}

	/** Any method a route does not answer; {@code allow} is the route's (see {@link Routes}). */
	public static ApiError methodNotAllowed(String allow) {
		HttpHeaders headers = new HttpHeaders();
		headers.set(HttpHeaders.ALLOW, allow);
		return new ApiError(HttpStatus.METHOD_NOT_ALLOWED, ErrorCode.INVALID_REQUEST, "method not allowed; use " + allow,
				headers);
	}

	public static ApiError notFound() {
		return new ApiError(HttpStatus.NOT_FOUND, ErrorCode.NOT_FOUND, null);
	}

	/** The database cannot be asked, or an argon2id check was shed (spec/README §8): the same answer. */
	public static ApiError temporarilyUnavailable() {
		HttpHeaders headers = new HttpHeaders();
		headers.set(HttpHeaders.RETRY_AFTER, "1");
		return new ApiError(HttpStatus.SERVICE_UNAVAILABLE, ErrorCode.TEMPORARILY_UNAVAILABLE,
				"the user database is unavailable; retry later", headers);
	}

	/**
	 * A request Tomcat read as the graceful shutdown began, not served (see {@link ContractErrorReportValve}); the
	 * connection is closed after it.
	 */
	static ApiError shuttingDown() {
		HttpHeaders headers = new HttpHeaders();
		headers.set(HttpHeaders.RETRY_AFTER, "1");
		headers.set(HttpHeaders.CONNECTION, "close");
		return new ApiError(HttpStatus.SERVICE_UNAVAILABLE, ErrorCode.TEMPORARILY_UNAVAILABLE,
				"the service is shutting down; send the request again", headers);
	}

	public static ApiError serverError() {
		return new ApiError(HttpStatus.INTERNAL_SERVER_ERROR, ErrorCode.SERVER_ERROR, "unexpected error");
	}

	/** An error raised below Spring MVC with only its status known (see {@link ApiErrorController}). */
	static ApiError ofStatus(HttpStatus status) {
		return switch (status) {
			case NOT_FOUND -> notFound();
			case UNSUPPORTED_MEDIA_TYPE -> unsupportedMediaType();
			case CONTENT_TOO_LARGE -> new ApiError(status, ErrorCode.INVALID_REQUEST, "request body is too large");
			// The client's fault although a 5xx (RFC 9110 §15.6.6): an HTTP version Tomcat does not speak.
			case HTTP_VERSION_NOT_SUPPORTED -> new ApiError(status, ErrorCode.INVALID_REQUEST, "HTTP version not supported");
			default -> status.is5xxServerError() ? serverError()
					: new ApiError(status, ErrorCode.INVALID_REQUEST, "malformed request");
		};
	}

	/** Every (status, code) an answer to POST /token can carry, so that its counter is exported from 0. */
	static List<ApiError> tokenAnswers() {
		return List.of(invalidRequest(""), invalidGrant(), unsupportedGrantType(), payloadTooLarge(0),
				unsupportedMediaType(), tooManyFailedLogins(1), temporarilyUnavailable(), serverError());
	}

	public HttpStatus status() {
		return this.status;
	}

	public ErrorCode code() {
		return this.code;
	}

	public String description() {
		return getMessage();
	}

	/**
	 * The answer: JSON, {@code Cache-Control: no-store} and this error's headers. The preset Content-Type skips content
	 * negotiation, so an odd Accept header never turns it into a 406.
	 */
	public ResponseEntity<byte[]> toResponse() {
		return ResponseEntity.status(this.status)
			.contentType(MediaType.APPLICATION_JSON)
			.cacheControl(CacheControl.noStore())
			.headers(this.headers)
			.body(Json.bytes(body()));
	}

	/** The JSON body of this error. */
	public ErrorBody body() {
		return new ErrorBody(this.code.code(), description());
	}

}
