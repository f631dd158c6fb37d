package io.simpleauth.web;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The filter on a real Tomcat with ONE request thread, in front of a servlet that answers how many body bytes it could
 * read: a body that arrives slowly holds no thread meanwhile (another request is answered while it trickles), and
 * arrives whole; the size limit and the body timeout reach the servlet as the controller expects them.
 */
class BodyBufferingFilterTest {

	private static final long TIMEOUT_MS = 1500;

	@TempDir
	Path base;

	private Tomcat tomcat;

	private int port;

	@BeforeEach
	void start() throws LifecycleException, IOException {
		this.tomcat = new Tomcat();
		this.tomcat.setBaseDir(Files.createDirectories(this.base.resolve("tomcat")).toString());
		Connector connector = new Connector();
		connector.setPort(0);
		connector.setProperty("address", "127.0.0.1");
		connector.setProperty("maxThreads", "1");
		connector.setProperty("minSpareThreads", "1");
		this.tomcat.setConnector(connector);
		Context context = this.tomcat.addContext("", this.base.toString());
		Tomcat.addServlet(context, "body", new BodyLength()).setAsyncSupported(true);
		context.addServletMappingDecoded("/*", "body");
		FilterDef filter = new FilterDef();
		filter.setFilterName("buffering");
		filter.setFilter(new BodyBufferingFilter(TIMEOUT_MS));
		filter.setAsyncSupported("true");
		context.addFilterDef(filter);
		FilterMap map = new FilterMap();
		map.setFilterName("buffering");
		map.addURLPattern("/*");
		map.setDispatcher("REQUEST");
		map.setDispatcher("ASYNC");
		context.addFilterMap(map);
		this.tomcat.start();
		this.port = connector.getLocalPort();
	}

	@AfterEach
	void stop() throws LifecycleException {
		this.tomcat.stop();
		this.tomcat.destroy();
	}

	@Test
	void aBodySentWithTheHeadersReachesTheServletWholeOnTheRequestsFirstDispatch() throws IOException {
		assertThat(post("/token", "{\"username\":\"jane\"}")).isEqualTo("read 19 bytes");
	}

	@Test
	void aBodyArrivingSlowlyHoldsNoThreadAndArrivesWhole() throws Exception {
		try (Socket slow = connect()) {
			OutputStream out = slow.getOutputStream();
			out.write(head("/token", "Content-Length: 10\r\n").getBytes(StandardCharsets.US_ASCII));
			out.write("abc".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			Thread.sleep(200);
			// Tomcat's one thread is free: the slow body is not being read on it.
			assertThat(post("/revoke", "token=x")).isEqualTo("read 7 bytes");
			out.write("defg".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			Thread.sleep(200);
			assertThat(post("/token", "{}")).isEqualTo("read 2 bytes");
			out.write("hij".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			assertThat(bodyOf(slow.getInputStream())).isEqualTo("read 10 bytes after waiting");
		}
	}

	@Test
	void aChunkedBodyIsReadOneBytePastTheLimitSoThatTheControllerAnswers413() throws IOException {
		String chunk = "a".repeat(5000);
		String chunked = "1388\r\n" + chunk + "\r\n1388\r\n" + chunk + "\r\n0\r\n\r\n";
		assertThat(exchange(head("/token", "Transfer-Encoding: chunked\r\n") + chunked))
			.isEqualTo("read " + (TokenController.MAX_BODY_BYTES + 1) + " bytes after waiting");
	}

	@Test
	void anAnnouncedLengthOverTheLimitIsNotWaitedFor() throws IOException {
		// Only the headers are sent: the servlet is reached at once (and the controller answers 413 without reading).
		try (Socket socket = connect()) {
			socket.getOutputStream()
				.write(head("/token", "Content-Length: 100000\r\n").getBytes(StandardCharsets.US_ASCII));
			assertThat(bodyOf(socket.getInputStream())).isEqualTo("not buffered");
		}
	}

	@Test
	void aBodyThatNeverCompletesReachesTheServletAsUnreadableAfterTheTimeout() throws IOException {
		try (Socket socket = connect()) {
			socket.getOutputStream()
				.write((head("/token", "Content-Length: 50\r\n") + "{\"user").getBytes(StandardCharsets.US_ASCII));
			assertThat(bodyOf(socket.getInputStream())).isEqualTo("unreadable");
		}
	}

	@Test
	void otherRoutesAndMethodsAreLeftAlone() throws IOException {
		assertThat(post("/health", "abc")).isEqualTo("not buffered");
		assertThat(exchange("PUT /token HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"))
			.isEqualTo("not buffered");
	}

	/**
	 * Answers "read N bytes" with the body's length ("... after waiting" when it was reached by the asynchronous cycle's
	 * dispatch), "unreadable" when it throws, "not buffered" for another stream.
	 */
	static class BodyLength extends HttpServlet {

		@Override
		protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
			String answer;
			if (!(request instanceof BodyBufferingFilter.BufferedRequest)) {
				answer = "not buffered";
			}
			else {
				try (InputStream in = request.getInputStream()) {
					answer = "read " + in.readAllBytes().length + " bytes"
							+ (request.getDispatcherType() == DispatcherType.ASYNC ? " after waiting" : "");
				}
				catch (IOException ex) {
					answer = "unreadable";
				}
			}
			byte[] body = answer.getBytes(StandardCharsets.US_ASCII);
			response.setContentLength(body.length);
			response.getOutputStream().write(body);
		}

	}

	private Socket connect() throws IOException {
		Socket socket = new Socket("127.0.0.1", this.port);
		socket.setSoTimeout(10_000); // a hang detector, not a latency bound
		return socket;
	}

	private static String head(String path, String header) {
		return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n" + header
				+ "\r\n";
	}

	private String post(String path, String body) throws IOException {
		return exchange(head(path, "Content-Length: " + body.length() + "\r\n") + body);
	}

	private String exchange(String request) throws IOException {
		try (Socket socket = connect()) {
			socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
			return bodyOf(socket.getInputStream());
		}
	}

	/** The body of a 200 response, read by its Content-Length (not to the end: Tomcat may still be reading). */
	private static String bodyOf(InputStream in) throws IOException {
		StringBuilder head = new StringBuilder();
		while (!head.toString().endsWith("\r\n\r\n")) {
			int c = in.read();
			assertThat(c).as("the response so far: %s", head).isNotEqualTo(-1);
			head.append((char) c);
		}
		assertThat(head.toString()).startsWith("HTTP/1.1 200 ");
		int length = Integer.parseInt(head.toString().replaceAll("(?s).*Content-Length: (\\d+).*", "$1"));
		return new String(in.readNBytes(length), StandardCharsets.US_ASCII);
	}

}
