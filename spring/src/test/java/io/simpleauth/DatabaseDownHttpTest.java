package io.simpleauth;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

import io.simpleauth.config.Settings;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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
@ContextConfiguration(initializers = DatabaseDownHttpTest.ServiceSettings.class)
class DatabaseDownHttpTest {

	/** A port free when the class loads, for METRICS_PORT (the test picks the public port as Boot does: 0). */
	static final int METRICS_PORT = freePort();

	static class ServiceSettings implements ApplicationContextInitializer<ConfigurableApplicationContext> {

		@Override
		public void initialize(ConfigurableApplicationContext context) {
			Settings settings = Vectors.settings(Map.of("DATABASE_URL", "postgres://auth:auth@127.0.0.1:1/auth",
					"DB_ACQUIRE_TIMEOUT_MS", "300", "METRICS_PORT", String.valueOf(METRICS_PORT)));
			SimpleAuthApplication.registering(settings, Vectors.keySet(settings)).initialize(context);
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
		// An error answer goes out with its length too, not chunked.
		assertThat(response.headers().firstValue("Transfer-Encoding")).isEmpty();
		assertThat(response.headers().firstValueAsLong("Content-Length")).hasValue(response.body().length());
	}

	/** The refresh grant and a revocation ask the database too: 503 with Retry-After, like the password grant. */
	@Test
	void aRefreshAndARevocationAre503WithRetryAfter() throws Exception {
		String token = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";
		HttpResponse<String> refresh = send(HttpRequest.newBuilder(uri("/token"))
			.header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString("grant_type=refresh_token&refresh_token=" + token)));
		HttpResponse<String> revoke = send(HttpRequest.newBuilder(uri("/revoke"))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"token\":\"" + token + "\"}")));
		for (HttpResponse<String> response : java.util.List.of(refresh, revoke)) {
			assertThat(response.statusCode()).isEqualTo(503);
			assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
			assertThat(response.headers().firstValue("Cache-Control")).hasValue("no-store");
			assertThat(response.body()).contains("\"error\":\"temporarily_unavailable\"");
		}
		HttpResponse<String> malformed = send(HttpRequest.newBuilder(uri("/revoke"))
			.header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString("token=not-a-refresh-token")));
		assertThat(malformed.statusCode()).as("nothing asked of the database").isEqualTo(200);
		assertThat(malformed.body()).isEmpty();
		assertThat(malformed.headers().firstValue("Cache-Control")).hasValue("no-store");
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

	/**
	 * Over real HTTP, because Tomcat has its own opinion on TRACE and MockMvc does not send bodies the way a client
	 * does: every method, with a body, chunked or not, gets the contract's answer.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "TRACE", "OPTIONS", "FOO", "QUERY", "PUT", "DELETE", "GET" })
	void otherMethodsOnTokenAre405WithAllowPostWhateverTheBody(String method) throws Exception {
		String login = "{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\"}";
		for (HttpRequest.BodyPublisher body : new HttpRequest.BodyPublisher[] { HttpRequest.BodyPublishers.noBody(),
				HttpRequest.BodyPublishers.ofString(login),
				// No known length: sent chunked.
				HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(login.getBytes())) }) {
			HttpResponse<String> response = send(
					HttpRequest.newBuilder(uri("/token")).header("Content-Type", "application/json").method(method, body));
			assertThat(response.statusCode()).as(method).isEqualTo(405);
			assertThat(response.headers().allValues("Allow")).as(method).containsExactly("POST");
			assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
			assertThat(response.body()).startsWith("{\"error\":\"invalid_request\",");
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "TRACE", "OPTIONS", "FOO", "QUERY", "POST" })
	void otherMethodsOnGetRoutesAre405WithAllowGetHead(String method) throws Exception {
		for (String path : new String[] { "/health", "/health/live", "/.well-known/jwks.json" }) {
			HttpResponse<String> response = send(HttpRequest.newBuilder(uri(path))
				.header("Content-Type", "application/json")
				.method(method, HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream("{}".getBytes()))));
			assertThat(response.statusCode()).as(method + " " + path).isEqualTo(405);
			assertThat(response.headers().allValues("Allow")).as(method + " " + path).containsExactly("GET, HEAD");
			assertThat(response.body()).startsWith("{\"error\":\"invalid_request\",");
		}
	}

	@Test
	void headIsTheGetAnswerWithoutBody() throws Exception {
		HttpResponse<String> live = send(HttpRequest.newBuilder(uri("/health/live")).HEAD());
		assertThat(live.statusCode()).isEqualTo(200);
		assertThat(live.headers().firstValue("Content-Type")).hasValue("application/json");
		assertThat(live.body()).isEmpty();
		HttpResponse<String> health = send(HttpRequest.newBuilder(uri("/health")).HEAD());
		assertThat(health.statusCode()).isEqualTo(503);
		assertThat(health.body()).isEmpty();
		HttpResponse<String> token = send(HttpRequest.newBuilder(uri("/token")).HEAD());
		assertThat(token.statusCode()).isEqualTo(405);
		assertThat(token.headers().allValues("Allow")).containsExactly("POST");
		assertThat(token.body()).isEmpty();
	}

	@ParameterizedTest
	@ValueSource(strings = { "TRACE", "OPTIONS", "FOO", "QUERY", "GET", "POST", "HEAD" })
	void unknownPathsAre404WhateverTheMethod(String method) throws Exception {
		Map<String, java.util.List<String>> nope = null;
		// /metrics and its spellings: on the public port an unknown path like any other (METRICS_PORT serves it).
		for (String path : new String[] { "/nope", "/token/", "/error", "/metrics", "/metrics/", "/metrics;x=1",
				"/%6detrics", "/metrics/jvm" }) {
			HttpResponse<String> response = send(HttpRequest.newBuilder(uri(path))
				.method(method, method.equals("HEAD") ? HttpRequest.BodyPublishers.noBody()
						: HttpRequest.BodyPublishers.ofString("{}")));
			assertThat(response.statusCode()).as(method + " " + path).isEqualTo(404);
			assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
			assertThat(response.headers().allValues("Allow")).as(method + " " + path).isEmpty();
			assertThat(response.body()).isEqualTo(method.equals("HEAD") ? "" : "{\"error\":\"not_found\"}");
			Map<String, java.util.List<String>> headers = new java.util.TreeMap<>(response.headers().map());
			headers.remove("date");
			if (nope == null) {
				nope = headers;
			}
			assertThat(headers).as(method + " " + path + ": the headers of /nope").isEqualTo(nope);
		}
	}

	@Test
	void metricsIsPrometheusTextOnTheMetricsPortAndNothingElseIs() throws Exception {
		HttpResponse<String> metrics = send(HttpRequest.newBuilder(metricsUri("/metrics")).GET());
		assertThat(metrics.statusCode()).isEqualTo(200);
		assertThat(metrics.headers().firstValue("Content-Type")).hasValue("text/plain;version=0.0.4;charset=utf-8");
		assertThat(metrics.body()).contains("# TYPE simpleauth_token_requests_total counter",
				"# TYPE simpleauth_token_request_duration_seconds histogram", "simpleauth_db_pool_max 10",
				"simpleauth_db_pool_connections{state=\"active\"}", "simpleauth_db_pool_connections{state=\"idle\"}",
				"simpleauth_db_pool_pending ", "# TYPE jvm_memory_used_bytes gauge");
		assertThat(metrics.body()).doesNotContain("http_server_requests");
		HttpResponse<String> head = send(HttpRequest.newBuilder(metricsUri("/metrics")).HEAD());
		assertThat(head.statusCode()).isEqualTo(200);
		assertThat(head.body()).isEmpty();
		for (String method : new String[] { "POST", "OPTIONS", "TRACE", "PUT", "FOO" }) {
			HttpResponse<String> other = send(
					HttpRequest.newBuilder(metricsUri("/metrics")).method(method, HttpRequest.BodyPublishers.noBody()));
			assertThat(other.statusCode()).as(method).isEqualTo(404);
			assertThat(other.headers().allValues("Allow")).as(method).isEmpty();
			assertThat(other.body()).as(method).isEqualTo("{\"error\":\"not_found\"}");
		}
		for (String path : new String[] { "/actuator", "/actuator/health", "/actuator/prometheus", "/prometheus",
				"/metrics/", "/metrics/jvm.memory.used", "/health", "/health/live", "/token", "/.well-known/jwks.json",
				"/info", "/" }) {
			HttpResponse<String> other = send(HttpRequest.newBuilder(metricsUri(path)).GET());
			assertThat(other.statusCode()).as(path).isEqualTo(404);
			assertThat(other.body()).as(path).isEqualTo("{\"error\":\"not_found\"}");
		}
	}

	private static URI metricsUri(String path) {
		return URI.create("http://127.0.0.1:" + METRICS_PORT + path);
	}

	private static int freePort() {
		try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

}
