package io.simpleauth.web;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.simpleauth.token.TokenPair;

/** The 200 body of POST /token: exactly these four members. */
@JsonPropertyOrder({ "access_token", "id_token", "token_type", "expires_in" })
public record TokenResponse(@JsonProperty("access_token") String accessToken, @JsonProperty("id_token") String idToken,
		@JsonProperty("token_type") String tokenType, @JsonProperty("expires_in") long expiresIn) {

	static TokenResponse of(TokenPair pair) {
		return new TokenResponse(pair.accessToken(), pair.idToken(), "Bearer", pair.expiresIn());
	}

	/** Never print tokens. */
	@Override
	public String toString() {
		return "TokenResponse[expires_in=" + this.expiresIn + "]";
	}

}
