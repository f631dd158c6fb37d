package io.simpleauth.web;

import java.util.Set;

import io.simpleauth.metrics.ServiceMetrics;
import jakarta.servlet.http.HttpServletRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
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

	private final ServiceMetrics metrics;

	public ApiExceptionHandler(ServiceMetrics metrics) {
		this.metrics = metrics;
	}

	@ExceptionHandler(OAuthException.class)
	public ResponseEntity<ErrorBody> oauth(OAuthException ex, HttpServletRequest request) {
		return counted(request, ErrorResponses.of(ex.status(), new ErrorBody(ex.error(), ex.description())));
	}

	/**
	 * Normally answered by {@link MethodRulesFilter} before Spring MVC; this is for a request path that Spring MVC
	 * maps to a route although it is not spelled exactly like one. The Allow header is the route's, as there.
	 */
	@ExceptionHandler(HttpRequestMethodNotSupportedException.class)
	public ResponseEntity<ErrorBody> methodNotAllowed(HttpRequestMethodNotSupportedException ex) {
		Set<HttpMethod> supported = ex.getSupportedHttpMethods();
		boolean post = supported != null && supported.contains(HttpMethod.POST);
		return ErrorResponses.methodNotAllowed(post ? Routes.POST : Routes.GET_HEAD);
	}

	@ExceptionHandler(HttpMediaTypeNotSupportedException.class)
	public ResponseEntity<ErrorBody> unsupportedMediaType(HttpServletRequest request) {
		return oauth(OAuthException.unsupportedMediaType(), request);
	}

	@ExceptionHandler(HttpMediaTypeNotAcceptableException.class)
	public ResponseEntity<ErrorBody> notAcceptable() {
		return ErrorResponses.of(HttpStatus.NOT_ACCEPTABLE,
				new ErrorBody("invalid_request", "only application/json responses are available"));
	}

	@ExceptionHandler({ NoHandlerFoundException.class, NoResourceFoundException.class })
	public ResponseEntity<ErrorBody> notFound() {
		return ErrorResponses.notFound();
	}

	@ExceptionHandler({ HttpMessageNotReadableException.class, ServletRequestBindingException.class,
			MethodArgumentTypeMismatchException.class })
	public ResponseEntity<ErrorBody> badRequest(HttpServletRequest request) {
		return oauth(OAuthException.invalidRequest("malformed request"), request);
	}

	@ExceptionHandler(MaxUploadSizeExceededException.class)
	public ResponseEntity<ErrorBody> tooLarge(HttpServletRequest request) {
		return oauth(OAuthException.payloadTooLarge(TokenController.MAX_BODY_BYTES), request);
	}

	@ExceptionHandler(DataAccessException.class)
	public ResponseEntity<ErrorBody> database(DataAccessException ex, HttpServletRequest request) {
		if (ErrorResponses.isDatabaseUnavailable(ex)) {
			// Logged once per outage by UserRepository, not per request.
			return counted(request, ErrorResponses.temporarilyUnavailable());
		}
		log.error("database error", ex);
		return counted(request, ErrorResponses.serverError());
	}

	/** The client went away mid-response: nothing to answer. */
	@ExceptionHandler(AsyncRequestNotUsableException.class)
	public void clientGone() {
	}

	@ExceptionHandler(Exception.class)
	public ResponseEntity<ErrorBody> unexpected(Exception ex, HttpServletRequest request) {
		log.error("unexpected error", ex);
		return counted(request, ErrorResponses.serverError());
	}

	private ResponseEntity<ErrorBody> counted(HttpServletRequest request, ResponseEntity<ErrorBody> response) {
		TokenController.answered(this.metrics, request, response.getStatusCode().value(), response.getBody().error());
		return response;
	}

}
