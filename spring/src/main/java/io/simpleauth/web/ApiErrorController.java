package io.simpleauth.web;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Replaces Boot's BasicErrorController for errors raised below Spring MVC (by Tomcat or a filter) and
 * forwarded to /error, so they too answer in the contract's shape. A direct request to /error is 404.
 */
@RestController
public class ApiErrorController implements ErrorController {

	@RequestMapping("/error")
	public ResponseEntity<ErrorBody> error(HttpServletRequest request) {
		if (!(request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE) instanceof Integer code)) {
			return ErrorResponses.notFound();
		}
		Object failure = request.getAttribute(RequestDispatcher.ERROR_EXCEPTION);
		if (failure instanceof Throwable t && ErrorResponses.isDatabaseUnavailable(t)) {
			return ErrorResponses.temporarilyUnavailable();
		}
		HttpStatus status = HttpStatus.resolve(code);
		if (status == null || status.is5xxServerError()) {
			return ErrorResponses.serverError();
		}
		return switch (status) {
			case NOT_FOUND -> ErrorResponses.notFound();
			// Not expected (MethodRulesFilter answers every 405 first); an unknown path is still a 404.
			case METHOD_NOT_ALLOWED -> {
				String allow = Routes.allowFor((String) request.getAttribute(RequestDispatcher.ERROR_REQUEST_URI));
				yield allow != null ? ErrorResponses.methodNotAllowed(allow) : ErrorResponses.notFound();
			}
			case UNSUPPORTED_MEDIA_TYPE -> ErrorResponses.of(status, new ErrorBody("invalid_request",
					"Content-Type must be application/json or application/x-www-form-urlencoded"));
			case CONTENT_TOO_LARGE -> ErrorResponses.of(status,
					new ErrorBody("invalid_request", "request body is too large"));
			default -> ErrorResponses.of(status, new ErrorBody("invalid_request", "malformed request"));
		};
	}

}
