package io.simpleauth.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import org.apache.catalina.connector.Connector;
import org.apache.catalina.connector.Request;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.http.HttpStatus;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tomcat's own answers, on a Tomcat made by Boot's factory with {@link TomcatConfig}'s customizer and no application
 * in it: what Tomcat refuses before any servlet is answered in the contract's shape, and a paused connector (a graceful
 * shutdown under way) turns every such answer into the shutdown's 503.
 */
class ContractErrorReportValveTest {

	private TomcatWebServer server;

	@BeforeEach
	void start() throws Exception {
		TomcatServletWebServerFactory factory = new TomcatServletWebServerFactory(0);
		factory.setAddress(InetAddress.getLoopbackAddress());
		new TomcatConfig().contractErrorReports().customize(factory);
		this.server = (TomcatWebServer) factory.getWebServer();
		this.server.start();
	}

	@AfterEach
	void stop() {
		this.server.stop();
		this.server.destroy();
	}

	/**
	 * Requests Tomcat refuses before any servlet (no Host header, an invalid target: 400; an HTTP version it does not
	 * speak: 505, kept), and a path no servlet serves (404): each the contract's JSON answer and error headers.
	 */
	@ParameterizedTest
	@CsvSource(delimiter = '|', value = {
		"GET /health HTTP/1.1\\r\\n\\r\\n | 400 | {\"error\":\"invalid_request\",\"error_description\":\"malformed request\"}",
		"GET /hea{lth HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n | 400 | {\"error\":\"invalid_request\",\"error_description\":\"malformed request\"}",
		"GET / HTTP/9.9\\r\\n\\r\\n | 505 | {\"error\":\"invalid_request\",\"error_description\":\"HTTP version not supported\"}",
		"GET /nothing HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n | 404 | {\"error\":\"not_found\"}" })
	void tomcatsOwnAnswersAreInTheContractsShape(String request, int status, String body) throws IOException {
		String answer = exchange(request.replace("\\r\\n", "\r\n"));
		assertThat(answer).startsWith("HTTP/1.1 " + status + " ")
			.containsIgnoringCase("Content-Type: application/json")
			.containsIgnoringCase("Cache-Control: no-store")
			.endsWith("\r\n\r\n" + body);
	}

	@Test
	void theConnectorsPauseIsSeen() {
		Connector connector = this.server.getTomcat().getConnector();
		Request request = new Request(connector, new org.apache.coyote.Request());
		assertThat(ContractErrorReportValve.paused(request)).isFalse();
		connector.pause();
		assertThat(ContractErrorReportValve.paused(request)).isTrue();
		connector.resume();
		assertThat(ContractErrorReportValve.paused(request)).isFalse();
	}

	@Test
	void whilePausedEveryOwnAnswerIsTheShutdowns503() {
		for (int status : new int[] { 400, 404, 500, 503 }) {
			ApiError error = ContractErrorReportValve.answer(status, true);
			assertThat(error.status()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
			assertThat(error.body().error()).isEqualTo("temporarily_unavailable");
			assertThat(error.toResponse().getHeaders().getFirst("Connection")).isEqualTo("close");
			assertThat(error.toResponse().getHeaders().getFirst("Retry-After")).isEqualTo("1");
		}
	}

	@Test
	void otherwiseTheStatusKeepsItsContractAnswer() {
		assertThat(ContractErrorReportValve.answer(400, false).body().error()).isEqualTo("invalid_request");
		assertThat(ContractErrorReportValve.answer(404, false).body().error()).isEqualTo("not_found");
		assertThat(ContractErrorReportValve.answer(500, false).body().error()).isEqualTo("server_error");
		assertThat(ContractErrorReportValve.answer(599, false).status()).isEqualTo(HttpStatus.INTERNAL_SERVER_ERROR);
	}

	private String exchange(String raw) throws IOException {
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.server.getPort())) {
			socket.setSoTimeout(5000);
			socket.getOutputStream().write(raw.getBytes(StandardCharsets.US_ASCII));
			InputStream in = socket.getInputStream();
			ByteArrayOutputStream answer = new ByteArrayOutputStream();
			in.transferTo(answer);
			return answer.toString(StandardCharsets.UTF_8);
		}
	}

}
