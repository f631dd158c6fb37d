package io.simpleauth.web;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.simpleauth.SimpleAuthApplication;
import io.simpleauth.Vectors;
import io.simpleauth.config.PasswordCheckExecutor;
import io.simpleauth.config.Settings;
import io.simpleauth.limits.AddressLimiter;
import io.simpleauth.limits.PasswordCheckLimit;
import io.simpleauth.limits.TooManyFailedLogins;
import io.simpleauth.metrics.Metrics;
import io.simpleauth.password.PasswordVerifier;
import io.simpleauth.token.RefreshToken;
import io.simpleauth.token.KeyRing;
import io.simpleauth.token.TokenService;
import io.simpleauth.token.TokenSigner;
import io.simpleauth.user.DatabaseHealth;
import io.simpleauth.user.DatabaseUnavailableException;
import io.simpleauth.user.Login;
import io.simpleauth.user.Session;
import io.simpleauth.user.SessionRepository;
import io.simpleauth.user.User;
import io.simpleauth.user.UserRepository;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.FilterType;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.context.bean.override.mockito.MockitoSpyBean;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.ResultActions;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.web.util.UriUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.ArgumentMatchers.isNull;
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.then;
import static org.mockito.BDDMockito.willThrow;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.head;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.options;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.request;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The web layer over a mocked repository: routes, the token flow and every error row of the contract. Without
 * {@link BodyBufferingFilter}: MockMvc's request has no non-blocking input (BodyBufferingFilterTest runs it on Tomcat).
 */
@WebMvcTest(properties = "logging.level.io.simpleauth.web.ApiExceptionHandler=off",
		excludeFilters = @ComponentScan.Filter(type = FilterType.ASSIGNABLE_TYPE, classes = BodyBufferingFilter.class))
@Import({ TokenService.class, PasswordVerifier.class, TokenSigner.class, KeyRing.class,
		PasswordCheckExecutor.class, Metrics.class, AddressLimiter.class, PasswordCheckLimit.class, ClientAddress.class })
@ContextConfiguration(initializers = TokenControllerTest.ServiceSettings.class)
class TokenControllerTest {

	static final String INVALID_GRANT = "{\"error\":\"invalid_grant\",\"error_description\":\"invalid username or password\"}";

	static final String INVALID_REFRESH_TOKEN = "{\"error\":\"invalid_grant\",\"error_description\":\"invalid refresh token\"}";

	static final String TOO_MANY_FAILED_LOGINS = "{\"error\":\"temporarily_unavailable\","
			+ "\"error_description\":\"too many failed logins; try again later\"}";

	/** A well-formed refresh token (spec/vectors.json). */
	static final String TOKEN = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

	static final User JOHN = new User(UUID.fromString("953b48eb-02ef-f93e-f582-e9b9ce4685b5"), "johndoe", "John Doe",
			"john@example.com", "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=");

	static final User BROKEN = new User(UUID.randomUUID(), "broken", "Broken Hash", "broken@example.com",
			"$bcrypt$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy");

	/** The settings and the key registered as main registers them: singletons, not bean definitions. */
	static class ServiceSettings implements ApplicationContextInitializer<ConfigurableApplicationContext> {

		@Override
		public void initialize(ConfigurableApplicationContext context) {
			// The address limit out of the way (this class sends many wrong passwords from one address; its own tests
			// are AddressLimiterTest), MockMvc's peer a trusted proxy (so that a test can pick its address with
			// X-Forwarded-For), two argon2id checks.
			Settings settings = Vectors.settings(Map.of("JWT_ISSUER", "https://login.example.test/tenant-1/",
					"LOGIN_IP_MAX_FAILURES", "1000000", "TRUSTED_PROXIES", "127.0.0.1", "MAX_PASSWORD_CHECKS", "2"));
			SimpleAuthApplication.registering(settings, Vectors.keySet(settings)).initialize(context);
		}

	}

	@TestConfiguration
	static class Registry {

		@Bean
		PrometheusMeterRegistry meterRegistry() {
			return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
		}

	}

	@Autowired
	MockMvc mvc;

	@Autowired
	PrometheusMeterRegistry registry;

	@MockitoBean
	UserRepository users;

	@MockitoBean
	SessionRepository sessions;

	@MockitoBean
	DatabaseHealth databaseHealth;

	@MockitoSpyBean
	AddressLimiter addresses;

	@Autowired
	PasswordCheckLimit passwordChecks;

	@BeforeEach
	void seed() {
		given(this.users.reserveLogin(anyString())).willReturn(new Login(Optional.empty(), 0));
		given(this.users.reserveLogin("john@example.com")).willReturn(new Login(Optional.of(JOHN), 0));
		given(this.users.reserveLogin("broken@example.com")).willReturn(new Login(Optional.of(BROKEN), 0));
		given(this.sessions.start(anyString(), any(), any(), any(), anyString(), anyString())).willReturn(true);
	}

	// ------------------------------------------------------------------ success

	@Test
	void jsonLogin() throws Exception {
		MvcResult result = this.mvc.perform(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\"}"))
			.andExpect(status().isOk())
			.andExpect(header().string("Content-Type", "application/json"))
			.andExpect(header().string("Cache-Control", "no-store"))
			.andExpect(header().string("Pragma", "no-cache"))
			.andReturn();
		// With its length, as every stack answers: a chunked answer takes Tomcat two writes.
		assertThat(result.getResponse().getHeader("Content-Length"))
			.isEqualTo(String.valueOf(result.getResponse().getContentAsByteArray().length));
		JsonNode body = JsonMapper.shared().readTree(result.getResponse().getContentAsString());
		assertThat(body.propertyNames()).containsExactly("access_token", "id_token", "token_type", "expires_in",
				"refresh_token");
		assertThat(body.get("token_type").stringValue()).isEqualTo("Bearer");
		assertThat(body.get("expires_in").asInt()).isEqualTo(600);
		String refreshToken = body.get("refresh_token").stringValue();
		assertThat(refreshToken).matches("[A-Za-z0-9_-]{43}");
		String sid = jose(body.get("access_token").stringValue(), 1).get("sid").stringValue();
		assertThat(jose(body.get("id_token").stringValue(), 1).get("sid").stringValue()).isEqualTo(sid);
		then(this.sessions).should()
			.start(eq("john@example.com"), eq(RefreshToken.sha256(refreshToken)), eq(UUID.fromString(sid)),
					eq(JOHN.id()), eq("public"), eq(JOHN.passwordHash()));
	}

	@Test
	void formLoginWithCharsetAndExtraParameters() throws Exception {
		this.mvc
			.perform(post("/token").contentType("application/x-www-form-urlencoded; charset=UTF-8")
				.content("grant_type=password&username=john%40example.com&password=TopSecret0%21&scope=openid&client_id=x"))
			.andExpect(status().isOk())
			.andExpect(header().string("Cache-Control", "no-store"));
	}

	// ------------------------------------------------------------------ client_id (RFC 9068 §2.2)

	@Test
	void theAccessTokenIsAnRfc9068TokenNamingTheDefaultClient() throws Exception {
		JsonNode body = tokens(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\"}"));
		String access = body.get("access_token").stringValue();
		assertThat(jose(access, 0).get("typ").stringValue()).isEqualTo("at+jwt");
		assertThat(jose(body.get("id_token").stringValue(), 0).get("typ").stringValue()).isEqualTo("JWT");
		assertThat(jose(access, 1).get("client_id").stringValue()).isEqualTo("public");
		assertThat(jose(body.get("id_token").stringValue(), 1).has("client_id")).isFalse();
	}

	/** OIDC Core §2 and RFC 9068: the ID token's aud is the client, the access token's the resource. */
	@Test
	void theIdTokensAudienceIsTheClientAndTheAccessTokensTheResource() throws Exception {
		JsonNode named = tokens(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\",\"client_id\":\"web\"}"));
		assertThat(jose(named.get("id_token").stringValue(), 1).get("aud").stringValue()).isEqualTo("web");
		assertThat(jose(named.get("access_token").stringValue(), 1).get("aud").stringValue()).isEqualTo("channel-api");
		JsonNode unnamed = tokens(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\"}"));
		assertThat(jose(unnamed.get("id_token").stringValue(), 1).get("aud").stringValue()).isEqualTo("public");
		assertThat(jose(unnamed.get("access_token").stringValue(), 1).get("aud").stringValue())
			.isEqualTo("channel-api");
	}

	@ParameterizedTest
	@ValueSource(strings = { "web", "x", " spaces and ~!@#$%^&*() are VSCHARs ", "0123456789" })
	void aClientIdInJsonOrFormIsTheAccessTokensClaim(String clientId) throws Exception {
		JsonNode fromJson = tokens(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\",\"client_id\":"
				+ JsonMapper.shared().writeValueAsString(clientId) + "}"));
		assertThat(jose(fromJson.get("access_token").stringValue(), 1).get("client_id").stringValue()).isEqualTo(clientId);
		JsonNode fromForm = tokens(form("grant_type=password&username=john%40example.com&password=TopSecret0%21&client_id="
				+ UriUtils.encodeQueryParam(clientId, StandardCharsets.UTF_8)));
		assertThat(jose(fromForm.get("access_token").stringValue(), 1).get("client_id").stringValue()).isEqualTo(clientId);
	}

	@Test
	void aClientIdOf128CharactersIsAccepted() throws Exception {
		String clientId = "c".repeat(128);
		JsonNode body = tokens(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\",\"client_id\":\""
				+ clientId + "\"}"));
		assertThat(jose(body.get("access_token").stringValue(), 1).get("client_id").stringValue()).isEqualTo(clientId);
	}

	@ParameterizedTest
	@ValueSource(strings = { "null", "5", "{}", "[]", "true", "\"\"", "\"tab\\there\"", "\"caf\u00e9\"",
			"\"nul\\u0000\"", "\"del\u007f\"" })
	void aJsonClientIdOutsideTheRuleIsInvalidRequest(String value) throws Exception {
		expectError(this.mvc.perform(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\",\"client_id\":"
				+ value + "}")), 400)
			.andExpect(errorCode("invalid_request"));
		then(this.users).shouldHaveNoInteractions();
	}

	@Test
	void aJsonClientIdOver128CharactersIsInvalidRequest() throws Exception {
		expectError(this.mvc.perform(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\",\"client_id\":\""
				+ "c".repeat(129) + "\"}")), 400)
			.andExpect(errorCode("invalid_request"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "client_id=", "client_id", "client_id=a&client_id=a", "client_id=a&client_id=b",
			"client_id=tab%09here", "client_id=caf%C3%A9", "client_id=%7F" })
	void aFormClientIdOutsideTheRuleOrRepeatedIsInvalidRequest(String clientId) throws Exception {
		expectError(this.mvc.perform(form("grant_type=password&username=john%40example.com&password=TopSecret0%21&" + clientId)),
				400)
			.andExpect(errorCode("invalid_request"));
		then(this.users).shouldHaveNoInteractions();
	}

	@Test
	void aBodyOfExactly8192BytesIsAccepted() throws Exception {
		String base = "{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\"}";
		String body = base.substring(0, base.length() - 1) + " ".repeat(8192 - base.length()) + "}";
		assertThat(body.getBytes(StandardCharsets.UTF_8)).hasSize(8192);
		this.mvc.perform(json(body)).andExpect(status().isOk());
	}

	// ------------------------------------------------------------------ invalid_grant

	@ParameterizedTest
	@ValueSource(strings = { "{\"username\":\"nobody@example.com\",\"password\":\"TopSecret0!\"}",
			"{\"username\":\"john@example.com\",\"password\":\"wrong\"}",
			"{\"username\":\"broken@example.com\",\"password\":\"TopSecret0!\"}" })
	void unknownUserWrongPasswordAndUnusableHashAnswerTheSameBytes(String body) throws Exception {
		expectError(this.mvc.perform(json(body)), 400).andExpect(content().bytes(INVALID_GRANT.getBytes()));
	}

	// ------------------------------------------------------------------ 400

	@ParameterizedTest
	@ValueSource(strings = { "", "not json", "[]", "\"str\"", "null", "{\"username\":\"john@example.com\"}",
			"{\"password\":\"x\"}", "{\"username\":1,\"password\":\"x\"}", "{\"username\":\"a\",\"password\":null}",
			"{\"username\":\"\",\"password\":\"x\"}", "{\"username\":\"a\",\"password\":{}}",
			"{\"username\":\"a\",\"password\":\"x\",\"grant_type\":5}", "{\"username\":\"a\",\"password\":\"x\"} trailing",
			"{\"username\":\"a\",\"username\":\"b\",\"password\":\"x\"}" })
	void malformedJsonIsInvalidRequest(String body) throws Exception {
		expectError(this.mvc.perform(json(body)), 400).andExpect(errorCode("invalid_request"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "client_credentials", "", "PASSWORD" })
	void otherGrantTypesAreUnsupported(String grantType) throws Exception {
		expectError(this.mvc.perform(json("{\"grant_type\":\"" + grantType + "\",\"username\":\"a\",\"password\":\"b\"}")),
				400)
			.andExpect(errorCode("unsupported_grant_type"));
		expectError(this.mvc.perform(form("grant_type=" + grantType + "&username=a&password=b")), 400)
			.andExpect(errorCode(grantType.isEmpty() ? "invalid_request" : "unsupported_grant_type"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "username=a&password=b", "grant_type=password&password=b", "grant_type=password&username=a",
			"grant_type=password&username=&password=b", "grant_type=password&username=a&password=b&username=c",
			"grant_type=password&grant_type=password&username=a&password=b", "grant_type=password&username=%zz&password=b",
			"grant_type=password&username=%C3%28&password=b", "grant_type=password&username=a%4&password=b",
			"grant_type=password&username=a&password=b%", "grant_type=password&username=a%+1&password=b" })
	void malformedFormsAreInvalidRequest(String body) throws Exception {
		expectError(this.mvc.perform(form(body)), 400).andExpect(errorCode("invalid_request"));
	}

	@Test
	void formDecodingReadsPlusAsASpaceAndEscapesAsUtf8Bytes() throws Exception {
		this.mvc.perform(form("grant_type=password&username=a%2Bb+c%C3%A9%40example.com&password=x"))
			.andExpect(errorCode("invalid_grant"));
		then(this.users).should().reserveLogin("a+b c\u00e9@example.com");
	}

	@Test
	void aNulInTheUsernameIsInvalidRequest() throws Exception {
		expectError(this.mvc.perform(json("{\"username\":\"john\\u0000@example.com\",\"password\":\"TopSecret0!\"}")), 400)
			.andExpect(errorCode("invalid_request"));
		expectError(this.mvc.perform(form("grant_type=password&username=john%00%40example.com&password=TopSecret0%21")), 400)
			.andExpect(errorCode("invalid_request"));
	}

	@Test
	void invalidUtf8IsInvalidRequest() throws Exception {
		byte[] body = "{\"username\":\"a\u00ff\",\"password\":\"x\"}".getBytes(StandardCharsets.ISO_8859_1);
		expectError(this.mvc.perform(post("/token").contentType(MediaType.APPLICATION_JSON).content(body)), 400)
			.andExpect(errorCode("invalid_request"));
	}

	@Test
	void limitsAreCountedInCodePointsAndBytes() throws Exception {
		String username254 = "😀".repeat(242) + "@example.com";
		this.mvc.perform(json("{\"username\":\"" + username254 + "\",\"password\":\"x\"}"))
			.andExpect(errorCode("invalid_grant"));
		this.mvc.perform(json("{\"username\":\"x" + username254 + "\",\"password\":\"x\"}"))
			.andExpect(errorCode("invalid_request"));
		this.mvc.perform(json("{\"username\":\"a\",\"password\":\"" + "é".repeat(512) + "\"}"))
			.andExpect(errorCode("invalid_grant"));
		this.mvc.perform(json("{\"username\":\"a\",\"password\":\"" + "é".repeat(512) + "x\"}"))
			.andExpect(errorCode("invalid_request"));
	}

	// ------------------------------------------------------------------ 413, 415

	@Test
	void aBodyOver8KiBIsTooLarge() throws Exception {
		String body = "{\"username\":\"john@example.com\",\"password\":\"" + "x".repeat(8200) + "\"}";
		expectError(this.mvc.perform(json(body)), 413).andExpect(errorCode("invalid_request"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "text/plain", "application/xml", "application/jsonx", "multipart/form-data; boundary=x" })
	void otherContentTypesAreUnsupported(String contentType) throws Exception {
		expectError(this.mvc.perform(post("/token").contentType(contentType).content("{}")), 415)
			.andExpect(errorCode("invalid_request"));
	}

	@Test
	void aMissingContentTypeIsUnsupported() throws Exception {
		expectError(this.mvc.perform(post("/token").content("{}")), 415).andExpect(errorCode("invalid_request"));
	}

	// ------------------------------------------------------------------ 405, 404

	/** Standard methods and tokens Spring has no constant for: every one gets the contract's answer. */
	static final String[] METHODS = { "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "FOO", "QUERY" };

	static final String[] GET_ROUTES = { "/health", "/health/live", "/.well-known/jwks.json",
			"/.well-known/openid-configuration" };

	@ParameterizedTest
	@ValueSource(strings = { "GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "FOO", "QUERY", "post" })
	void otherMethodsOnTokenAndRevokeAre405WithAllowPost(String method) throws Exception {
		for (String path : new String[] { "/token", "/revoke" }) {
			ResultActions result = expectError(this.mvc.perform(request(HttpMethod.valueOf(method), path)
				.contentType(MediaType.APPLICATION_JSON)
				.content("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\",\"token\":\"" + TOKEN
						+ "\"}")), 405)
				.andExpect(header().string("Allow", "POST"));
			if (method.equals("HEAD")) {
				result.andExpect(content().string("")); // MockMvc keeps bodies of HEAD answers, so this one is ours
			}
			else {
				result.andExpect(errorCode("invalid_request"));
			}
		}
		then(this.users).shouldHaveNoInteractions();
		then(this.sessions).shouldHaveNoInteractions();
	}

	@ParameterizedTest
	@ValueSource(strings = { "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "FOO", "QUERY", "get" })
	void otherMethodsOnGetRoutesAre405WithAllowGetHead(String method) throws Exception {
		for (String path : GET_ROUTES) {
			expectError(this.mvc.perform(request(HttpMethod.valueOf(method), path).contentType(MediaType.APPLICATION_JSON)
				.content("{}")), 405)
				.andExpect(header().string("Allow", "GET, HEAD"))
				.andExpect(errorCode("invalid_request"));
		}
		then(this.databaseHealth).shouldHaveNoInteractions();
	}

	@Test
	void corsPreflightIsNotAnsweredForSpring() throws Exception {
		expectError(this.mvc.perform(options("/token").header("Origin", "https://example.com")
			.header("Access-Control-Request-Method", "POST")), 405)
			.andExpect(header().string("Allow", "POST"))
			.andExpect(header().doesNotExist("Access-Control-Allow-Origin"));
	}

	/** The GET answer's status and headers; the container drops the body (DatabaseDownHttpTest checks that). */
	@Test
	void headOnGetRoutesIsTheGetAnswer() throws Exception {
		given(this.databaseHealth.isUp()).willReturn(true);
		for (String path : GET_ROUTES) {
			MvcResult get = this.mvc.perform(get(path)).andExpect(status().isOk()).andReturn();
			this.mvc.perform(head(path))
				.andExpect(status().isOk())
				.andExpect(header().string("Content-Type", get.getResponse().getContentType()))
				.andExpect(header().string("Cache-Control", get.getResponse().getHeader("Cache-Control")));
		}
		given(this.databaseHealth.isUp()).willReturn(false);
		this.mvc.perform(head("/health")).andExpect(status().isServiceUnavailable());
	}

	@ParameterizedTest
	@ValueSource(strings = { "/", "/nope", "/token/", "/health/", "/health/live/", "/.well-known/openid-configuration/x",
			"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration.json" })
	void unknownPathsAre404NotFound(String path) throws Exception {
		for (String method : METHODS) {
			ResultActions result = expectError(this.mvc.perform(request(HttpMethod.valueOf(method), path)), 404);
			if (!method.equals("HEAD")) { // the container drops HEAD bodies, MockMvc does not
				result.andExpect(content().string("{\"error\":\"not_found\"}"));
			}
		}
	}

	/** The public port: /metrics is not a route (DatabaseDownHttpTest checks the bytes and the metrics port). */
	@ParameterizedTest
	@ValueSource(strings = { "/metrics", "/metrics/", "/metrics/jvm.memory.used" })
	void metricsIs404OnThePublicPortWhateverTheMethod(String path) throws Exception {
		for (String method : METHODS) {
			this.mvc.perform(request(HttpMethod.valueOf(method), path))
				.andExpect(status().isNotFound())
				.andExpect(header().doesNotExist("Allow"));
		}
	}

	// ------------------------------------------------------------------ 503, 500

	@Test
	void noPooledConnectionIs503WithRetryAfter() throws Exception {
		given(this.users.reserveLogin("john@example.com"))
			.willThrow(new CannotGetJdbcConnectionException("Failed to obtain JDBC Connection",
					new java.sql.SQLTransientConnectionException("simple-auth - Connection is not available")));
		expectError(this.mvc.perform(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\"}")), 503)
			.andExpect(header().string("Retry-After", "1"))
			.andExpect(errorCode("temporarily_unavailable"));
	}

	@Test
	void theRepositorysDatabaseUnavailableIs503WithRetryAfter() throws Exception {
		given(this.users.reserveLogin("john@example.com")).willThrow(new DatabaseUnavailableException(
				new CannotGetJdbcConnectionException("Failed to obtain JDBC Connection")));
		expectError(this.mvc.perform(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\"}")), 503)
			.andExpect(header().string("Retry-After", "1"))
			.andExpect(errorCode("temporarily_unavailable"));
	}

	@Test
	void anythingUnexpectedIs500WithoutDetails() throws Exception {
		given(this.users.reserveLogin("john@example.com")).willThrow(new IllegalStateException("secret internals"));
		expectError(this.mvc.perform(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\"}")), 500)
			.andExpect(errorCode("server_error"))
			.andExpect(result -> assertThat(result.getResponse().getContentAsString()).doesNotContain("secret internals"));
	}

	// ------------------------------------------------------------------ jwks, health

	@Test
	void jwksServesTheVectorsKey() throws Exception {
		MvcResult result = this.mvc.perform(get("/.well-known/jwks.json"))
			.andExpect(status().isOk())
			.andExpect(header().string("Cache-Control", "public, max-age=300"))
			.andExpect(header().string("Content-Type", "application/json"))
			.andReturn();
		JsonNode jwks = JsonMapper.shared().readTree(result.getResponse().getContentAsString());
		JsonNode expected = Vectors.json().get("keys").get(0).get("jwk");
		assertThat(jwks.get("keys")).hasSize(1);
		assertThat(jwks.get("keys").get(0)).isEqualTo(expected);
	}

	/** spec/README §3: exactly these members, the URLs joined to an issuer with a trailing '/' without doubling it. */
	@Test
	void theDiscoveryDocument() throws Exception {
		MvcResult result = this.mvc.perform(get("/.well-known/openid-configuration"))
			.andExpect(status().isOk())
			.andExpect(header().string("Cache-Control", "public, max-age=300"))
			.andExpect(header().string("Content-Type", "application/json"))
			.andReturn();
		assertThat(result.getResponse().getContentAsString()).isEqualTo("{"
				+ "\"issuer\":\"https://login.example.test/tenant-1/\","
				+ "\"token_endpoint\":\"https://login.example.test/tenant-1/token\","
				+ "\"jwks_uri\":\"https://login.example.test/tenant-1/.well-known/jwks.json\","
				+ "\"grant_types_supported\":[\"password\",\"refresh_token\"],"
				+ "\"revocation_endpoint\":\"https://login.example.test/tenant-1/revoke\","
				+ "\"revocation_endpoint_auth_methods_supported\":[\"none\"]," + "\"response_types_supported\":[],"
				+ "\"subject_types_supported\":[\"public\"]," + "\"id_token_signing_alg_values_supported\":[\"RS256\"],"
				+ "\"token_endpoint_auth_methods_supported\":[\"none\"],"
				+ "\"claims_supported\":[\"iss\",\"aud\",\"sub\",\"iat\",\"exp\",\"sid\",\"jti\",\"client_id\",\"name\","
				+ "\"preferred_username\",\"email\",\"at_hash\"]}");
	}

	@Test
	void healthFollowsTheDatabase() throws Exception {
		given(this.databaseHealth.isUp()).willReturn(true);
		this.mvc.perform(get("/health")).andExpect(status().isOk()).andExpect(content().string("{\"status\":\"up\"}"));
		given(this.databaseHealth.isUp()).willReturn(false);
		this.mvc.perform(get("/health"))
			.andExpect(status().isServiceUnavailable())
			.andExpect(content().string("{\"status\":\"down\"}"));
	}

	@Test
	void livenessIsUpWithoutAskingTheDatabase() throws Exception {
		given(this.databaseHealth.isUp()).willReturn(false);
		this.mvc.perform(get("/health/live"))
			.andExpect(status().isOk())
			.andExpect(header().string("Content-Type", "application/json"))
			.andExpect(header().string("Cache-Control", "no-store"))
			.andExpect(content().string("{\"status\":\"up\"}"));
		then(this.databaseHealth).shouldHaveNoInteractions();
	}

	// ------------------------------------------------------------------ metrics

	@Test
	void aLoginMovesItsCountersAndBothHistograms() throws Exception {
		Map<String, Double> before = samples();
		this.mvc.perform(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\"}"))
			.andExpect(status().isOk());
		Map<String, Double> after = samples();
		assertThat(moved(before, after)).containsOnlyKeys(
				"simpleauth_token_requests_total{error=\"none\",status=\"200\"}",
				"simpleauth_password_checks_total{result=\"match\",scheme=\"hmac-sha256\"}",
				"simpleauth_token_request_duration_seconds_count", "simpleauth_token_request_duration_seconds_sum",
				"simpleauth_token_request_duration_seconds_bucket{le=\"+Inf\"}",
				"simpleauth_token_signing_duration_seconds_count", "simpleauth_token_signing_duration_seconds_sum",
				"simpleauth_token_signing_duration_seconds_bucket{le=\"+Inf\"}")
			.containsEntry("simpleauth_token_requests_total{error=\"none\",status=\"200\"}", 1.0)
			.containsEntry("simpleauth_token_request_duration_seconds_count", 1.0)
			.containsEntry("simpleauth_token_signing_duration_seconds_count", 1.0);
	}

	@Test
	void everyErrorAnswerIsCountedWithItsCode() throws Exception {
		given(this.users.reserveLogin("down@example.com"))
			.willThrow(new CannotGetJdbcConnectionException("Failed to obtain JDBC Connection",
					new java.sql.SQLTransientConnectionException("simple-auth - Connection is not available")));
		Map<String, Double> before = samples();
		this.mvc.perform(json("{\"username\":\"nobody@example.com\",\"password\":\"x\"}"));
		this.mvc.perform(json("{\"username\":\"broken@example.com\",\"password\":\"x\"}"));
		this.mvc.perform(json("not json"));
		this.mvc.perform(json("{\"grant_type\":\"x\",\"username\":\"a\",\"password\":\"b\"}"));
		this.mvc.perform(json("{\"username\":\"a\",\"password\":\"" + "x".repeat(8200) + "\"}"));
		this.mvc.perform(post("/token").contentType("text/plain").content("x"));
		this.mvc.perform(json("{\"username\":\"down@example.com\",\"password\":\"x\"}"));
		this.mvc.perform(get("/token")); // not a POST: 405, not counted
		Map<String, Double> moved = moved(before, samples());
		assertThat(moved).containsEntry("simpleauth_token_requests_total{error=\"invalid_grant\",status=\"400\"}", 2.0)
			.containsEntry("simpleauth_token_requests_total{error=\"invalid_request\",status=\"400\"}", 1.0)
			.containsEntry("simpleauth_token_requests_total{error=\"unsupported_grant_type\",status=\"400\"}", 1.0)
			.containsEntry("simpleauth_token_requests_total{error=\"invalid_request\",status=\"413\"}", 1.0)
			.containsEntry("simpleauth_token_requests_total{error=\"invalid_request\",status=\"415\"}", 1.0)
			.containsEntry("simpleauth_token_requests_total{error=\"temporarily_unavailable\",status=\"503\"}", 1.0)
			.containsEntry("simpleauth_password_checks_total{result=\"mismatch\",scheme=\"dummy\"}", 1.0)
			.containsEntry("simpleauth_password_checks_total{result=\"unusable\",scheme=\"unknown\"}", 1.0)
			.containsEntry("simpleauth_token_request_duration_seconds_count", 7.0)
			.doesNotContainKey("simpleauth_token_signing_duration_seconds_count");
	}

	@Test
	void theExpositionHasTheContractsFamiliesAndBuckets() {
		String text = this.registry.scrape();
		assertThat(text).contains("simpleauth_key_reloads_total{result=\"success\"} 0.0",
				"simpleauth_key_reloads_total{result=\"failure\"} 0.0");
		assertThat(text).contains("# TYPE simpleauth_rejections_total counter",
				"simpleauth_rejections_total{reason=\"username_locked\"}",
				"simpleauth_rejections_total{reason=\"address_locked\"}",
				"simpleauth_rejections_total{reason=\"overload\"}", "simpleauth_rejections_total{reason=\"refresh_reuse\"}",
				"simpleauth_token_requests_total{error=\"temporarily_unavailable\",status=\"429\"}");
		assertThat(text).contains("# TYPE simpleauth_token_requests_total counter",
				"# TYPE simpleauth_key_reloads_total counter",
				"# TYPE simpleauth_password_checks_total counter",
				"# TYPE simpleauth_token_request_duration_seconds histogram",
				"# TYPE simpleauth_token_signing_duration_seconds histogram");
		assertThat(buckets(text, "simpleauth_token_request_duration_seconds")).containsExactly(0.001, 0.0025, 0.005,
				0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, Double.POSITIVE_INFINITY);
		assertThat(buckets(text, "simpleauth_token_signing_duration_seconds")).containsExactly(0.0001, 0.00025, 0.0005,
				0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, Double.POSITIVE_INFINITY);
	}

	private static List<Double> buckets(String text, String histogram) {
		return text.lines()
			.filter(line -> line.startsWith(histogram + "_bucket{le=\""))
			.map(line -> line.substring(line.indexOf('"') + 1, line.indexOf('"', line.indexOf('"') + 1)))
			.map(le -> le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le))
			.toList();
	}

	/** Every sample of the service's own families: "name{labels}" → value. */
	private Map<String, Double> samples() {
		Map<String, Double> samples = new java.util.TreeMap<>();
		this.registry.scrape().lines().filter(line -> line.startsWith("simpleauth_")).forEach(line -> {
			int space = line.lastIndexOf(' ');
			samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
		});
		return samples;
	}

	private static Map<String, Double> moved(Map<String, Double> before, Map<String, Double> after) {
		Map<String, Double> moved = new java.util.TreeMap<>();
		after.forEach((series, value) -> {
			double delta = value - before.getOrDefault(series, 0.0);
			if (delta != 0 && !(series.contains("_bucket{") && !series.contains("+Inf"))) {
				moved.put(series, delta);
			}
		});
		return moved;
	}

	// ------------------------------------------------------------------ the refresh grant (spec/README §7)

	@Test
	void aRefreshIsANewPairInTheFamilyWithANewRefreshToken() throws Exception {
		UUID family = UUID.randomUUID();
		given(this.sessions.rotate(eq(RefreshToken.sha256(TOKEN)), isNull(), any()))
			.willReturn(Optional.of(new Session(family, "mobile", JOHN)));
		MvcResult result = this.mvc.perform(json("{\"grant_type\":\"refresh_token\",\"refresh_token\":\"" + TOKEN + "\"}"))
			.andExpect(status().isOk())
			.andExpect(header().string("Cache-Control", "no-store"))
			.andExpect(header().string("Pragma", "no-cache"))
			.andReturn();
		JsonNode body = JsonMapper.shared().readTree(result.getResponse().getContentAsString());
		assertThat(body.propertyNames()).containsExactly("access_token", "id_token", "token_type", "expires_in",
				"refresh_token");
		String next = body.get("refresh_token").stringValue();
		assertThat(next).matches("[A-Za-z0-9_-]{43}").isNotEqualTo(TOKEN);
		then(this.sessions).should().rotate(eq(RefreshToken.sha256(TOKEN)), isNull(), eq(RefreshToken.sha256(next)));
		JsonNode access = jose(body.get("access_token").stringValue(), 1);
		assertThat(access.get("sid").stringValue()).isEqualTo(family.toString());
		assertThat(access.get("client_id").stringValue()).isEqualTo("mobile");
		assertThat(jose(body.get("id_token").stringValue(), 1).get("email").stringValue()).isEqualTo(JOHN.email());
		then(this.users).shouldHaveNoInteractions();
	}

	@Test
	void aFormRefreshNamingItsClientIsRotatedForThatClient() throws Exception {
		given(this.sessions.rotate(any(), eq("web"), any()))
			.willReturn(Optional.of(new Session(UUID.randomUUID(), "web", JOHN)));
		this.mvc.perform(form("grant_type=refresh_token&refresh_token=" + TOKEN + "&client_id=web"))
			.andExpect(status().isOk());
	}

	@ParameterizedTest
	@ValueSource(strings = { "short", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8A",
			"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln" })
	void aMalformedRefreshTokenIsInvalidGrantWithoutTheDatabase(String token) throws Exception {
		expectError(this.mvc.perform(json("{\"grant_type\":\"refresh_token\",\"refresh_token\":\"" + token + "\"}")), 400)
			.andExpect(content().bytes(INVALID_REFRESH_TOKEN.getBytes()));
		then(this.sessions).shouldHaveNoInteractions();
	}

	@Test
	void aTokenThatDoesNotRotateIsInvalidGrantWithTheRefreshBytes() throws Exception {
		given(this.sessions.rotate(any(), any(), any())).willReturn(Optional.empty());
		expectError(this.mvc.perform(form("grant_type=refresh_token&refresh_token=" + TOKEN)), 400)
			.andExpect(content().bytes(INVALID_REFRESH_TOKEN.getBytes()));
		then(this.sessions).should().revokeFamilyOfUsed(RefreshToken.sha256(TOKEN));
	}

	@Test
	void aRefreshWithTheDatabaseDownIs503() throws Exception {
		given(this.sessions.rotate(any(), any(), any())).willThrow(new DatabaseUnavailableException(
				new CannotGetJdbcConnectionException("Failed to obtain JDBC Connection")));
		expectError(this.mvc.perform(json("{\"grant_type\":\"refresh_token\",\"refresh_token\":\"" + TOKEN + "\"}")), 503)
			.andExpect(header().string("Retry-After", "1"))
			.andExpect(errorCode("temporarily_unavailable"));
	}

	// ------------------------------------------------------------------ POST /revoke (spec/README §3)

	@Test
	void aRevocationIs200WithAnEmptyBodyInBothEncodings() throws Exception {
		for (MockHttpServletRequestBuilder request : List.of(
				post("/revoke").contentType(MediaType.APPLICATION_JSON).content("{\"token\":\"" + TOKEN + "\"}"),
				post("/revoke").contentType("application/x-www-form-urlencoded; charset=utf-8")
					.content("token=" + TOKEN + "&token_type_hint=refresh_token"))) {
			MvcResult result = this.mvc.perform(request)
				.andExpect(status().isOk())
				.andExpect(header().string("Cache-Control", "no-store"))
				.andReturn();
			assertThat(result.getResponse().getContentAsByteArray()).isEmpty();
		}
		then(this.sessions).should(times(2)).revokeFamily(RefreshToken.sha256(TOKEN));
	}

	@Test
	void anyOtherTokenIs200TooWithoutTheDatabase() throws Exception {
		this.mvc.perform(post("/revoke").contentType(MediaType.APPLICATION_JSON).content("{\"token\":\"eyJ.x.y\"}"))
			.andExpect(status().isOk());
		then(this.sessions).shouldHaveNoInteractions();
	}

	@ParameterizedTest
	@ValueSource(strings = { "{}", "{\"token\":\"\"}", "{\"token\":null}", "{\"token\":5}", "not json", "[]" })
	void aJsonRevocationWithoutAStringTokenIs400(String body) throws Exception {
		expectError(this.mvc.perform(post("/revoke").contentType(MediaType.APPLICATION_JSON).content(body)), 400)
			.andExpect(errorCode("invalid_request"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "token=", "token=a&token=b", "token_type_hint=refresh_token" })
	void aFormRevocationWithoutExactlyOneTokenIs400(String body) throws Exception {
		expectError(this.mvc.perform(post("/revoke").contentType(MediaType.APPLICATION_FORM_URLENCODED).content(body)), 400)
			.andExpect(errorCode("invalid_request"));
	}

	@Test
	void aRevocationIs415And413LikeAToken() throws Exception {
		expectError(this.mvc.perform(post("/revoke").contentType("text/plain").content("token=x")), 415)
			.andExpect(errorCode("invalid_request"));
		expectError(this.mvc.perform(post("/revoke").content("token=x")), 415);
		expectError(this.mvc.perform(post("/revoke").contentType(MediaType.APPLICATION_FORM_URLENCODED)
			.content("token=" + "x".repeat(8200))), 413)
			.andExpect(errorCode("invalid_request"));
	}

	@Test
	void aRevocationWithTheDatabaseDownIs503() throws Exception {
		willThrow(new DatabaseUnavailableException(new CannotGetJdbcConnectionException("Failed to obtain JDBC Connection")))
			.given(this.sessions)
			.revokeFamily(any());
		expectError(this.mvc.perform(post("/revoke").contentType(MediaType.APPLICATION_JSON)
			.content("{\"token\":\"" + TOKEN + "\"}")), 503)
			.andExpect(header().string("Retry-After", "1"))
			.andExpect(errorCode("temporarily_unavailable"));
	}

	// ------------------------------------------------------------------ limits (spec/README §8)

	@Test
	void aLockedUsernameIs429WithItsRetryAfter() throws Exception {
		given(this.users.reserveLogin("locked@example.com")).willReturn(new Login(Optional.of(JOHN), 42));
		expectError(this.mvc.perform(json("{\"username\":\"locked@example.com\",\"password\":\"TopSecret0!\"}")), 429)
			.andExpect(header().string("Retry-After", "42"))
			.andExpect(content().bytes(TOO_MANY_FAILED_LOGINS.getBytes()));
	}

	@Test
	void aLockedAddressIs429BeforeTheDatabaseAndTheTrustedHeaderNamesIt() throws Exception {
		InetAddress guesser = InetAddress.getByName("203.0.113.66");
		willThrow(new TooManyFailedLogins(17)).given(this.addresses).reserve(guesser);
		expectError(this.mvc.perform(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\"}")
			.header("X-Forwarded-For", "203.0.113.66")), 429)
			.andExpect(header().string("Retry-After", "17"))
			.andExpect(content().bytes(TOO_MANY_FAILED_LOGINS.getBytes()));
		then(this.users).shouldHaveNoInteractions();
		this.mvc.perform(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\"}")
			.header("X-Forwarded-For", "203.0.113.66, 198.51.100.1")).andExpect(status().isOk());
		this.mvc.perform(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\"}")
			.header("Fly-Client-IP", "203.0.113.66")).andExpect(status().isOk());
	}

	@Test
	void aFailedLoginKeepsTheAttemptsReservedForTheUsernameAndTheAddress() throws Exception {
		this.mvc.perform(json("{\"username\":\"John@Example.com\",\"password\":\"wrong\"}")
			.header("X-Forwarded-For", "198.51.100.9")).andExpect(errorCode("invalid_grant"));
		then(this.users).should().reserveLogin("John@Example.com");
		then(this.users).should(never()).giveBack(anyString());
		then(this.addresses).should().reserve(InetAddress.getByName("198.51.100.9"));
		then(this.addresses).should(never()).release(any());
	}

	@Test
	void anArgon2idCheckWithNoPermitLeftIs503WithTheDatabasesBody() throws Exception {
		given(this.users.reserveLogin("down@example.com")).willThrow(new DatabaseUnavailableException(
				new CannotGetJdbcConnectionException("Failed to obtain JDBC Connection")));
		String unavailable = this.mvc.perform(json("{\"username\":\"down@example.com\",\"password\":\"x\"}"))
			.andReturn()
			.getResponse()
			.getContentAsString();
		try (PasswordCheckLimit.Permit a = this.passwordChecks.acquire();
				PasswordCheckLimit.Permit b = this.passwordChecks.acquire()) {
			for (String username : new String[] { "nobody@example.com", "broken@example.com" }) {
				expectError(this.mvc.perform(json("{\"username\":\"" + username + "\",\"password\":\"x\"}")), 503)
					.andExpect(header().string("Retry-After", "1"))
					.andExpect(content().string(unavailable));
			}
			this.mvc.perform(json("{\"username\":\"john@example.com\",\"password\":\"TopSecret0!\"}"))
				.andExpect(status().isOk()); // a legacy match needs no permit
			expectError(this.mvc.perform(json("{\"username\":\"john@example.com\",\"password\":\"wrong\"}")), 503)
				.andExpect(content().string(unavailable)); // a legacy mismatch's decoy does
		}
		assertThat(this.passwordChecks.available()).isEqualTo(2);
		then(this.users).should().giveBack("nobody@example.com");
		then(this.users).should().giveBack("broken@example.com");
		then(this.users).should().giveBack("john@example.com");
	}

	@Test
	void limitsAreCountedAsRejectionsAndTheirAnswers() throws Exception {
		given(this.users.reserveLogin("locked@example.com")).willReturn(new Login(Optional.empty(), 5));
		Map<String, Double> before = samples();
		this.mvc.perform(json("{\"username\":\"locked@example.com\",\"password\":\"x\"}"));
		try (PasswordCheckLimit.Permit a = this.passwordChecks.acquire();
				PasswordCheckLimit.Permit b = this.passwordChecks.acquire()) {
			this.mvc.perform(json("{\"username\":\"nobody@example.com\",\"password\":\"x\"}"));
		}
		Map<String, Double> moved = moved(before, samples());
		assertThat(moved).containsEntry("simpleauth_rejections_total{reason=\"username_locked\"}", 1.0)
			.containsEntry("simpleauth_rejections_total{reason=\"overload\"}", 1.0)
			.containsEntry("simpleauth_token_requests_total{error=\"temporarily_unavailable\",status=\"429\"}", 1.0)
			.containsEntry("simpleauth_token_requests_total{error=\"temporarily_unavailable\",status=\"503\"}", 1.0)
			.doesNotContainKey("simpleauth_rejections_total{reason=\"address_locked\"}");
	}

	// ------------------------------------------------------------------ helpers

	private JsonNode tokens(MockHttpServletRequestBuilder request) throws Exception {
		MvcResult result = this.mvc.perform(request).andExpect(status().isOk()).andReturn();
		return JsonMapper.shared().readTree(result.getResponse().getContentAsString());
	}

	private static JsonNode jose(String jwt, int part) {
		return JsonMapper.shared()
			.readTree(new String(Base64.getUrlDecoder().decode(jwt.split("\\.")[part]), StandardCharsets.UTF_8));
	}

	private static MockHttpServletRequestBuilder json(String body) {
		return post("/token").contentType(MediaType.APPLICATION_JSON).content(body);
	}

	private static MockHttpServletRequestBuilder form(String body) {
		return post("/token").contentType(MediaType.APPLICATION_FORM_URLENCODED).content(body);
	}

	private static ResultActions expectError(ResultActions actions, int status) throws Exception {
		return actions.andExpect(status().is(status))
			.andExpect(header().string("Content-Type", "application/json"))
			.andExpect(header().string("Cache-Control", "no-store"));
	}

	private static org.springframework.test.web.servlet.ResultMatcher errorCode(String code) {
		return result -> assertThat(JsonMapper.shared().readTree(result.getResponse().getContentAsString()).get("error")
			.stringValue()).isEqualTo(code);
	}

}
