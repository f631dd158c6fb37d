package io.simpleauth.web;

import java.util.Set;

import io.simpleauth.config.DatabaseErrors;
import io.simpleauth.limits.Overloaded;
import io.simpleauth.limits.TooManyFailedLogins;
import io.simpleauth.metrics.Metrics;
import io.simpleauth.user.DatabaseUnavailableException;
import jakarta.servlet.http.HttpServletRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.http.HttpMethod;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.HttpMediaTypeNotAcceptableException;
import org.springframework.web.HttpMediaTypeNotSupportedException;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.ServletRequestBindingException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.async.AsyncRequestNotUsableException;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.multipart.MaxUploadSizeExceededException;
import org.springframework.web.servlet.NoHandlerFoundException;
import org.springframework.web.servlet.resource.NoResourceFoundException;

/**
 * The one place that maps failures to the contract's error rows, Spring MVC's own 404/405/415/400
 * included, so that nothing is ever answered in Spring's default format or with a stack trace. The error answers
 * to POST /token are counted here ({@code simpleauth_token_requests_total}, with their status and error code).
 */
@RestControllerAdvice
public class ApiExceptionHandler {

	private static final Logger log = LoggerFactory.getLogger(ApiExceptionHandler.class);

	private final Metrics metrics;

	public ApiExceptionHandler(Metrics metrics) {
		this.metrics = metrics;
		for (ApiError answer : ApiError.tokenAnswers()) {
			metrics.expectTokenRequests(answer.status().value(), answer.code().code());
		}
	}

	@ExceptionHandler(ApiError.class)
	public ResponseEntity<byte[]> apiError(ApiError error, HttpServletRequest request) {
		TokenController.answered(this.metrics, request, error.status().value(), error.code().code());
		return error.toResponse();
	}

	/**
	 * Normally answered by {@link MethodRulesFilter} before Spring MVC; this is for a request path that Spring MVC
	 * maps to a route although it is not spelled exactly like one. The Allow header is the route's, as there.
	 */
	@ExceptionHandler(HttpRequestMethodNotSupportedException.class)
	public ResponseEntity<byte[]> methodNotAllowed(HttpRequestMethodNotSupportedException ex) {
		Set<HttpMethod> supported = ex.getSupportedHttpMethods();
		boolean post = supported != null && supported.contains(HttpMethod.POST);
		return ApiError.methodNotAllowed(post ? Routes.POST : Routes.GET_HEAD).toResponse();
	}

	@ExceptionHandler(HttpMediaTypeNotSupportedException.class)
	public ResponseEntity<byte[]> unsupportedMediaType(HttpServletRequest request) {
		return apiError(ApiError.unsupportedMediaType(), request);
	}

	@ExceptionHandler(HttpMediaTypeNotAcceptableException.class)
	public ResponseEntity<byte[]> notAcceptable() {
		return ApiError.notAcceptable().toResponse();
	}

	@ExceptionHandler({ NoHandlerFoundException.class, NoResourceFoundException.class })
	public ResponseEntity<byte[]> notFound() {
		return ApiError.notFound().toResponse();
	}

	@ExceptionHandler({ HttpMessageNotReadableException.class, ServletRequestBindingException.class,
			MethodArgumentTypeMismatchException.class })
	public ResponseEntity<byte[]> badRequest(HttpServletRequest request) {
		return apiError(ApiError.invalidRequest("malformed request"), request);
	}

	@ExceptionHandler(MaxUploadSizeExceededException.class)
	public ResponseEntity<byte[]> tooLarge(HttpServletRequest request) {
		return apiError(ApiError.payloadTooLarge(TokenController.MAX_BODY_BYTES), request);
	}

	/** A lock of spec/README §8 (counted by whoever decided it, as its rejection reason). */
	@ExceptionHandler(TooManyFailedLogins.class)
	public ResponseEntity<byte[]> tooManyFailedLogins(TooManyFailedLogins locked, HttpServletRequest request) {
		return apiError(ApiError.tooManyFailedLogins(locked.retryAfterSeconds()), request);
	}

	/** An argon2id check shed by the overload limit: answered as an unavailable database is. */
	@ExceptionHandler(Overloaded.class)
	public ResponseEntity<byte[]> overloaded(HttpServletRequest request) {
		return apiError(ApiError.temporarilyUnavailable(), request);
	}

	/** Logged once per outage by the repositories, not per request. */
	@ExceptionHandler(DatabaseUnavailableException.class)
	public ResponseEntity<byte[]> databaseUnavailable(HttpServletRequest request) {
		return apiError(ApiError.temporarilyUnavailable(), request);
	}

	/** Any other data error is a 500, unless it too means the database is unavailable (one not raised by a lookup). */
	@ExceptionHandler(DataAccessException.class)
	public ResponseEntity<byte[]> database(DataAccessException ex, HttpServletRequest request) {
		if (DatabaseErrors.isUnavailable(ex)) {
			return apiError(ApiError.temporarilyUnavailable(), request);
		}
		log.error("database error", ex);
		return apiError(ApiError.serverError(), request);
	}

	/** The client went away mid-response: nothing to answer. */
	@ExceptionHandler(AsyncRequestNotUsableException.class)
	public void clientGone() {
	}

	@ExceptionHandler(Exception.class)
	public ResponseEntity<byte[]> unexpected(Exception ex, HttpServletRequest request) {
		log.error("unexpected error", ex);
		return apiError(ApiError.serverError(), request);
	}

}
