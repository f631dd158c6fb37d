package io.simpleauth.token;

/** What a granted request is answered: the signed pair and the session's new refresh token. */
public record GrantedTokens(TokenPair pair, String refreshToken) {

	/** Never print tokens. */
	@Override
	public String toString() {
		return "GrantedTokens[" + this.pair + "]";
	}

}
