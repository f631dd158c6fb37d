package io.simpleauth;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.ContextConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The whole application over real HTTP (embedded Tomcat) with the database unreachable: it starts anyway,
 * says so on /health and /token, and the paths MockMvc cannot see (chunked bodies, TRACE) answer per contract.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ContextConfiguration(initializers = DatabaseDownHttpTest.Settings.class)
class DatabaseDownHttpTest {

	static class Settings implements ApplicationContextInitializer<ConfigurableApplicationContext> {

		@Override
		public void initialize(ConfigurableApplicationContext context) {
			SimpleAuthApplication
				.registering(Vectors.settings(Map.of("DATABASE_URL", "postgres://auth:auth@127.0.0.1:1/auth",
						"DB_ACQUIRE_TIMEOUT_MS", "300")))
				.initialize(context);
		}

	}

	@LocalServerPort
	int port;

	private final HttpClient http = HttpClient.newHttpClient();

	@Test
	void healthIsDown() throws Exception {
		HttpResponse<String> response = send(HttpRequest.newBuilder(uri("/health")).GET());
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(response.body()).isEqualTo("{\"status\":\"down\"}");
	}

	@Test
	void liveIsUpWhileTheDatabaseIsDown() throws Exception {
		HttpResponse<String> response = send(HttpRequest.newBuilder(uri("/health/live")).GET());
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
		assertThat(response.headers().firstValue("Cache-Control")).hasValue("no-store");
		assertThat(response.body()).isEqualTo("{\"status\":\"up\"}");
	}

	@Test
	void tokenIs503WithRetryAfter() throws Exception {
		HttpResponse<String> response = send(HttpRequest.newBuilder(uri("/token"))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\"}")));
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(response.headers().firstValue("Cache-Control")).hasValue("no-store");
		assertThat(response.body()).contains("\"error\":\"temporarily_unavailable\"");
	}

	@Test
	void aChunkedBodyOver8KiBIs413() throws Exception {
		byte[] body = ("{\"username\":\"a\",\"password\":\"" + "x".repeat(9000) + "\"}").getBytes();
		HttpResponse<String> response = send(HttpRequest.newBuilder(uri("/token"))
			.header("Content-Type", "application/json")
			// An InputStream publisher has no known length: the client sends it chunked.
			.POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body))));
		assertThat(response.statusCode()).isEqualTo(413);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
		assertThat(response.body()).contains("\"error\":\"invalid_request\"");
	}

	@Test
	void traceIs405AndUnknownPathsAre404() throws Exception {
		HttpResponse<String> trace = send(HttpRequest.newBuilder(uri("/token")).method("TRACE", HttpRequest.BodyPublishers.noBody()));
		assertThat(trace.statusCode()).isEqualTo(405);
		assertThat(trace.headers().firstValue("Allow")).hasValue("POST");
		HttpResponse<String> traceHealth = send(HttpRequest.newBuilder(uri("/health")).method("TRACE", HttpRequest.BodyPublishers.noBody()));
		assertThat(traceHealth.statusCode()).isEqualTo(405);
		assertThat(traceHealth.headers().firstValue("Allow")).hasValue("GET");
		HttpResponse<String> traceUnknown = send(HttpRequest.newBuilder(uri("/nope")).method("TRACE", HttpRequest.BodyPublishers.noBody()));
		assertThat(traceUnknown.statusCode()).isEqualTo(404);
		assertThat(traceUnknown.body()).isEqualTo("{\"error\":\"not_found\"}");
		HttpResponse<String> missing = send(HttpRequest.newBuilder(uri("/token/")).GET());
		assertThat(missing.statusCode()).isEqualTo(404);
		assertThat(missing.body()).isEqualTo("{\"error\":\"not_found\"}");
		HttpResponse<String> error = send(HttpRequest.newBuilder(uri("/error")).GET());
		assertThat(error.statusCode()).isEqualTo(404);
		assertThat(error.body()).isEqualTo("{\"error\":\"not_found\"}");
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

}
