package io.simpleauth.web;

import java.io.IOException;

import io.simpleauth.config.Settings;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The contract's method rules for the service's routes, before Spring MVC sees the request: a method a route does not
 * answer — standard (OPTIONS, TRACE, PUT, ...) or any other token a client sends (FOO, QUERY) — is 405 with the
 * route's {@code Allow} and a JSON body (headers only for HEAD). Without it, Spring MVC answers OPTIONS itself
 * (200 with its own Allow) and lists HEAD/OPTIONS in its 405s. Other paths go on to Spring MVC, which answers
 * any method on them 404 (see {@link ApiExceptionHandler}) — except OPTIONS and TRACE, which the servlet answers
 * itself on a path without a handler (200 with an Allow header, or an echo); those are answered 404 here. The
 * ports: on METRICS_PORT only {@code GET}/{@code HEAD /metrics} goes on (to Actuator), everything else is 404; on the
 * public port {@code /metrics} is 404 like any unknown path.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
public class MethodRulesFilter extends OncePerRequestFilter {

	private static final byte[] NOT_ALLOWED_POST = json(ApiError.methodNotAllowed(Routes.POST));

	private static final byte[] NOT_ALLOWED_GET_HEAD = json(ApiError.methodNotAllowed(Routes.GET_HEAD));

	private static final byte[] NOT_FOUND = json(ApiError.notFound());

	private final int metricsPort;

	public MethodRulesFilter(Settings settings) {
		this.metricsPort = settings.metricsPort();
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		String method = request.getMethod();
		// The path as the servlet container normalised it (decoded, no ;parameters), so that no spelling of /metrics
		// reaches Actuator's handler from the public port.
		String path = request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
		boolean metrics = path.equals(Routes.METRICS) || path.startsWith(Routes.METRICS + "/");
		if (request.getLocalPort() == this.metricsPort) {
			// The metrics port: GET (and HEAD) /metrics, everything else 404.
			if (path.equals(Routes.METRICS) && ("GET".equals(method) || "HEAD".equals(method))) {
				chain.doFilter(request, response);
			}
			else {
				answer(response, HttpServletResponse.SC_NOT_FOUND, NOT_FOUND, !"HEAD".equals(method));
			}
			return;
		}
		String allow = Routes.allowFor(request.getRequestURI());
		if (allow == null) {
			if ("OPTIONS".equals(method) || "TRACE".equals(method)) {
				answer(response, HttpServletResponse.SC_NOT_FOUND, NOT_FOUND, true);
				return;
			}
			if (metrics) {
				// Any method: 404 as an unknown path is (ApiErrorController answers it), never Actuator's 200 or 405.
				response.sendError(HttpServletResponse.SC_NOT_FOUND);
				return;
			}
			chain.doFilter(request, response);
		}
		else if (Routes.permits(allow, method)) {
			chain.doFilter(request, response);
		}
		else {
			response.setHeader(HttpHeaders.ALLOW, allow);
			answer(response, HttpServletResponse.SC_METHOD_NOT_ALLOWED,
					allow == Routes.POST ? NOT_ALLOWED_POST : NOT_ALLOWED_GET_HEAD, !"HEAD".equals(method));
		}
	}

	private static void answer(HttpServletResponse response, int status, byte[] body, boolean withBody)
			throws IOException {
		response.setStatus(status);
		response.setContentType(MediaType.APPLICATION_JSON_VALUE);
		response.setHeader(HttpHeaders.CACHE_CONTROL, "no-store");
		response.setContentLength(body.length);
		if (withBody) {
			response.getOutputStream().write(body);
		}
	}

	/** The body the same error has when Spring MVC answers it. */
	private static byte[] json(ApiError error) {
		return Json.bytes(error.body());
	}

}
