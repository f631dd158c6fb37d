package io.simpleauth.web;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.coyote.AbstractProtocol;
import org.apache.coyote.ActionCode;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;

/**
 * The host's error report valve: Tomcat's own answers, given before a request reaches the application, in the
 * contract's shape instead of Tomcat's HTML page. Tomcat answers this way a request it cannot parse (no Host header,
 * an invalid request target, conflicting Content-Length headers: 400), and a request whose request line it read just
 * as the connector was paused for a graceful shutdown. For the latter Tomcat means 503 and a closed connection, but it
 * leaves that request's headers unparsed and its next check, for the Host header, turns the 503 into a 400: a valid
 * login would be told it is malformed. So while the connector is paused, every answer made here is the shutdown's
 * 503 {@code temporarily_unavailable} with {@code Connection: close}: the request was not served and can be sent
 * again, to this instance's successor.
 * <p>
 * Errors inside the application never come here: they are answered by {@link ApiExceptionHandler} and
 * {@link ApiErrorController}, and an answer with a body is left alone.
 */
public class ContractErrorReportValve extends ErrorReportValve {

	@Override
	protected void report(Request request, Response response, Throwable throwable) {
		int status = response.getStatus();
		if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
			return;
		}
		AtomicBoolean ioAllowed = new AtomicBoolean(false);
		response.getCoyoteResponse().action(ActionCode.IS_IO_ALLOWED, ioAllowed);
		if (!ioAllowed.get()) {
			return; // the connection is gone: nobody would read the answer
		}
		// The same answer Spring MVC sends for this error: its status, headers and body from ApiError.toResponse.
		ResponseEntity<byte[]> answer = answer(status, paused(request)).toResponse();
		try {
			response.setStatus(answer.getStatusCode().value());
			answer.getHeaders().forEach((name, values) -> values.forEach(value -> response.addHeader(name, value)));
			response.setCharacterEncoding(StandardCharsets.UTF_8.name());
			Writer writer = response.getReporter();
			if (writer != null) {
				writer.write(new String(answer.getBody(), StandardCharsets.UTF_8));
				response.finishResponse();
			}
		}
		catch (IOException | IllegalStateException ex) {
			// The client went away while the answer was written: nothing more to tell it.
		}
	}

	/** The contract's answer to a request Tomcat answered {@code status} itself, on a connector paused or not. */
	static ApiError answer(int status, boolean paused) {
		if (paused) {
			return ApiError.shuttingDown();
		}
		HttpStatus known = HttpStatus.resolve(status);
		return known != null ? ApiError.ofStatus(known) : ApiError.serverError();
	}

	/** Whether the request's connector is paused: a graceful shutdown has begun. */
	static boolean paused(Request request) {
		return request.getConnector() != null
				&& request.getConnector().getProtocolHandler() instanceof AbstractProtocol<?> protocol
				&& protocol.isPaused();
	}

}
