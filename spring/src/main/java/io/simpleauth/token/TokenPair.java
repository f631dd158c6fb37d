package io.simpleauth.token;

/** What a successful login is issued: the access token, the ID token and their lifetime in seconds. */
public record TokenPair(String accessToken, String idToken, long expiresIn) {

	/** Never print tokens. */
	@Override
	public String toString() {
		return "TokenPair[expires_in=" + this.expiresIn + "]";
	}

}
