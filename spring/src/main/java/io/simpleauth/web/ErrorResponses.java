package io.simpleauth.web;

import io.simpleauth.user.DatabaseErrors;

import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

/** Builds every error response: JSON, {@code Cache-Control: no-store}, whatever the client's Accept says. */
final class ErrorResponses {

	private ErrorResponses() {
	}

	static ResponseEntity<ErrorBody> of(HttpStatus status, ErrorBody body) {
		return of(status, body, HttpHeaders.EMPTY);
	}

	static ResponseEntity<ErrorBody> of(HttpStatus status, ErrorBody body, HttpHeaders extra) {
		// A preset Content-Type skips content negotiation: an odd Accept header never turns this into a 406.
		return ResponseEntity.status(status)
			.contentType(MediaType.APPLICATION_JSON)
			.cacheControl(CacheControl.noStore())
			.headers(extra)
			.body(body);
	}

	static ResponseEntity<ErrorBody> notFound() {
		return of(HttpStatus.NOT_FOUND, ErrorBody.NOT_FOUND);
	}

	static ResponseEntity<ErrorBody> methodNotAllowed(String allow) {
		HttpHeaders headers = new HttpHeaders();
		headers.set(HttpHeaders.ALLOW, allow);
		return of(HttpStatus.METHOD_NOT_ALLOWED, new ErrorBody("invalid_request", methodNotAllowedDescription(allow)),
				headers);
	}

	static String methodNotAllowedDescription(String allow) {
		return "method not allowed; use " + allow;
	}

	static ResponseEntity<ErrorBody> temporarilyUnavailable() {
		HttpHeaders headers = new HttpHeaders();
		headers.set(HttpHeaders.RETRY_AFTER, "1");
		return of(HttpStatus.SERVICE_UNAVAILABLE,
				new ErrorBody("temporarily_unavailable", "the user database is unavailable; retry later"), headers);
	}

	static ResponseEntity<ErrorBody> serverError() {
		return of(HttpStatus.INTERNAL_SERVER_ERROR, new ErrorBody("server_error", "unexpected error"));
	}

	static boolean isDatabaseUnavailable(Throwable failure) {
		return DatabaseErrors.isUnavailable(failure);
	}

}
