package io.simpleauth.web;

import java.nio.charset.StandardCharsets;

import io.simpleauth.token.TokenRequest;
import io.simpleauth.web.TokenRequestParser.Format;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Both grants and the revocation body, in both encodings: what is accepted, and the 400 of everything else. */
class TokenRequestParserTest {

	private static final String TOKEN = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

	// ------------------------------------------------------------------ the password grant

	@Test
	void aPasswordGrantInJsonWithOrWithoutGrantType() {
		assertThat(json("{\"username\":\"a@example.com\",\"password\":\"pw\"}"))
			.isEqualTo(new TokenRequest.Password("a@example.com", "pw", null));
		assertThat(json("{\"grant_type\":\"password\",\"username\":\"a@example.com\",\"password\":\"pw\",\"client_id\":\"web\","
				+ "\"refresh_token\":5}"))
			.as("refresh_token is not the password grant's business")
			.isEqualTo(new TokenRequest.Password("a@example.com", "pw", "web"));
	}

	@Test
	void aPasswordGrantInAForm() {
		assertThat(form("grant_type=password&username=a%40example.com&password=p+w&scope=openid&refresh_token=x&refresh_token=y"))
			.isEqualTo(new TokenRequest.Password("a@example.com", "p w", null));
	}

	// ------------------------------------------------------------------ the refresh grant

	@Test
	void aRefreshGrantInJsonIgnoresUsernameAndPassword() {
		assertThat(json("{\"grant_type\":\"refresh_token\",\"refresh_token\":\"" + TOKEN + "\"}"))
			.isEqualTo(new TokenRequest.Refresh(TOKEN, null));
		assertThat(json("{\"grant_type\":\"refresh_token\",\"refresh_token\":\"" + TOKEN
				+ "\",\"client_id\":\"web\",\"username\":5,\"password\":null}"))
			.isEqualTo(new TokenRequest.Refresh(TOKEN, "web"));
	}

	@Test
	void aRefreshGrantInAFormIgnoresUsernameAndPassword() {
		assertThat(form("grant_type=refresh_token&refresh_token=" + TOKEN + "&client_id=web&username=a&username=b"))
			.isEqualTo(new TokenRequest.Refresh(TOKEN, "web"));
	}

	@Test
	void aRefreshTokenOfAnyShapeIsTheGrantsToRefuseNotTheParsers() {
		assertThat(json("{\"grant_type\":\"refresh_token\",\"refresh_token\":\"short\"}"))
			.isEqualTo(new TokenRequest.Refresh("short", null));
		assertThat(form("grant_type=refresh_token&refresh_token=a%2Fb%3D"))
			.isEqualTo(new TokenRequest.Refresh("a/b=", null));
	}

	@ParameterizedTest
	@ValueSource(strings = { "{\"grant_type\":\"refresh_token\"}", "{\"grant_type\":\"refresh_token\",\"refresh_token\":\"\"}",
			"{\"grant_type\":\"refresh_token\",\"refresh_token\":null}", "{\"grant_type\":\"refresh_token\",\"refresh_token\":5}",
			"{\"grant_type\":\"refresh_token\",\"refresh_token\":{}}", "{\"grant_type\":\"refresh_token\",\"refresh_token\":[\"x\"]}",
			"{\"grant_type\":\"refresh_token\",\"username\":\"a\",\"password\":\"b\"}",
			"{\"grant_type\":\"refresh_token\",\"refresh_token\":\"x\",\"client_id\":\"\"}",
			"{\"grant_type\":\"refresh_token\",\"refresh_token\":\"x\",\"client_id\":7}",
			"{\"grant_type\":\"refresh_token\",\"refresh_token\":\"x\",\"refresh_token\":\"y\"}" })
	void aJsonRefreshGrantWithoutAUsableRefreshTokenIsInvalidRequest(String body) {
		assertInvalidRequest(() -> json(body));
	}

	@ParameterizedTest
	@ValueSource(strings = { "grant_type=refresh_token", "grant_type=refresh_token&refresh_token=",
			"grant_type=refresh_token&refresh_token", "grant_type=refresh_token&refresh_token=x&refresh_token=x",
			"grant_type=refresh_token&refresh_token=x&client_id=a&client_id=b",
			"grant_type=refresh_token&grant_type=refresh_token&refresh_token=x",
			"grant_type=refresh_token&refresh_token=x&client_id=", "grant_type=refresh_token&refresh_token=%zz",
			"grant_type=refresh_token&username=a&password=b" })
	void aFormRefreshGrantWithoutAUsableRefreshTokenIsInvalidRequest(String body) {
		assertInvalidRequest(() -> form(body));
	}

	@ParameterizedTest
	@ValueSource(strings = { "client_credentials", "", "PASSWORD", "Refresh_Token", "refresh-token", "authorization_code" })
	void otherGrantTypesAreUnsupportedInBothEncodings(String grantType) {
		assertError(() -> json("{\"grant_type\":\"" + grantType + "\",\"refresh_token\":\"x\"}"), "unsupported_grant_type");
		assertError(() -> form("grant_type=" + grantType + "&refresh_token=x"),
				grantType.isEmpty() ? "invalid_request" : "unsupported_grant_type");
	}

	@ParameterizedTest
	@ValueSource(strings = { "5", "null", "true", "{}", "[\"refresh_token\"]" })
	void aGrantTypeThatIsNotAStringIsInvalidRequest(String grantType) {
		assertInvalidRequest(() -> json("{\"grant_type\":" + grantType + ",\"refresh_token\":\"x\"}"));
	}

	// ------------------------------------------------------------------ POST /revoke

	@Test
	void aRevocationIsItsTokenWhateverElseComes() {
		assertThat(revokeJson("{\"token\":\"" + TOKEN + "\"}")).isEqualTo(TOKEN);
		assertThat(revokeJson("{\"token\":\"anything\",\"token_type_hint\":\"refresh_token\",\"client_id\":\"\",\"x\":5}"))
			.isEqualTo("anything");
		assertThat(revokeJson("{\"token\":\"anything\",\"token_type_hint\":5,\"client_id\":{}}"))
			.as("ignored members of any type")
			.isEqualTo("anything");
		assertThat(revokeForm("token=" + TOKEN + "&token_type_hint=refresh_token&client_id=a&client_id=b"))
			.isEqualTo(TOKEN);
		assertThat(revokeForm("token=eyJ.a%2Bb.c")).isEqualTo("eyJ.a+b.c");
	}

	@ParameterizedTest
	@ValueSource(strings = { "{}", "{\"token\":\"\"}", "{\"token\":null}", "{\"token\":5}", "{\"token\":{}}",
			"{\"token\":[\"x\"]}", "{\"refresh_token\":\"x\"}", "[]", "\"x\"", "null", "not json", "",
			"{\"token\":\"x\",\"token\":\"y\"}", "{\"token\":\"x\"} trailing" })
	void aJsonRevocationWithoutAStringTokenIsInvalidRequest(String body) {
		assertInvalidRequest(() -> revokeJson(body));
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "token=", "token", "token=x&token=x", "token=x&token=y", "refresh_token=x",
			"token_type_hint=refresh_token", "token=%zz", "token=%C3%28" })
	void aFormRevocationWithoutExactlyOneTokenIsInvalidRequest(String body) {
		assertInvalidRequest(() -> revokeForm(body));
	}

	// ------------------------------------------------------------------ helpers

	private static TokenRequest json(String body) {
		return TokenRequestParser.parse(Format.JSON, body.getBytes(StandardCharsets.UTF_8));
	}

	private static TokenRequest form(String body) {
		return TokenRequestParser.parse(Format.FORM, body.getBytes(StandardCharsets.UTF_8));
	}

	private static String revokeJson(String body) {
		return TokenRequestParser.parseRevocation(Format.JSON, body.getBytes(StandardCharsets.UTF_8));
	}

	private static String revokeForm(String body) {
		return TokenRequestParser.parseRevocation(Format.FORM, body.getBytes(StandardCharsets.UTF_8));
	}

	private static void assertInvalidRequest(Runnable parse) {
		assertError(parse, "invalid_request");
	}

	private static void assertError(Runnable parse, String code) {
		assertThatThrownBy(parse::run).isInstanceOfSatisfying(ApiError.class, error -> {
			assertThat(error.code().code()).isEqualTo(code);
			assertThat(error.status().value()).isEqualTo(400);
		});
	}

}
