package io.simpleauth.web;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.simpleauth.token.GrantedTokens;

/** The 200 body of POST /token, either grant: exactly these five members. */
@JsonPropertyOrder({ "access_token", "id_token", "token_type", "expires_in", "refresh_token" })
public record TokenResponse(@JsonProperty("access_token") String accessToken, @JsonProperty("id_token") String idToken,
		@JsonProperty("token_type") String tokenType, @JsonProperty("expires_in") long expiresIn,
		@JsonProperty("refresh_token") String refreshToken) {

	static TokenResponse of(GrantedTokens granted) {
		return new TokenResponse(granted.pair().accessToken(), granted.pair().idToken(), "Bearer",
				granted.pair().expiresIn(), granted.refreshToken());
	}

	/** Never print tokens. */
	@Override
	public String toString() {
		return "TokenResponse[expires_in=" + this.expiresIn + "]";
	}

}
