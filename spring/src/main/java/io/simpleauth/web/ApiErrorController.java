package io.simpleauth.web;

import io.simpleauth.config.DatabaseErrors;
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
	public ResponseEntity<byte[]> error(HttpServletRequest request) {
		if (!(request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE) instanceof Integer code)) {
			return ApiError.notFound().toResponse();
		}
		Object failure = request.getAttribute(RequestDispatcher.ERROR_EXCEPTION);
		if (failure instanceof Throwable t && DatabaseErrors.isUnavailable(t)) {
			return ApiError.temporarilyUnavailable().toResponse();
		}
		HttpStatus status = HttpStatus.resolve(code);
		if (status == null) {
			return ApiError.serverError().toResponse();
		}
		if (status == HttpStatus.METHOD_NOT_ALLOWED) {
			// Not expected (MethodRulesFilter answers every 405 first); an unknown path is still a 404.
			String allow = Routes.allowFor((String) request.getAttribute(RequestDispatcher.ERROR_REQUEST_URI));
			return (allow != null ? ApiError.methodNotAllowed(allow) : ApiError.notFound()).toResponse();
		}
		return ApiError.ofStatus(status).toResponse();
	}

}
