package io.simpleauth.token;

/**
 * A validated POST /token request, of one of the two grants; {@code clientId} is a {@code client_id} within the
 * {@link io.simpleauth.config.ClientId} rule, or null when the request has none.
 */
public sealed interface TokenRequest permits TokenRequest.Password, TokenRequest.Refresh {

	String clientId();

	/** The password grant: username within 1–254 code points (no NUL), password within 1–1024 UTF-8 bytes. */
	record Password(String username, String password, String clientId) implements TokenRequest {

		public Password(String username, String password) {
			this(username, password, null);
		}

		/** Never print the password. */
		@Override
		public String toString() {
			return "TokenRequest.Password[username=" + this.username + ", clientId=" + this.clientId + "]";
		}

	}

	/** The refresh grant: a non-empty {@code refresh_token} of any shape (the shape is checked by the grant). */
	record Refresh(String refreshToken, String clientId) implements TokenRequest {

		/** Never print the token. */
		@Override
		public String toString() {
			return "TokenRequest.Refresh[clientId=" + this.clientId + "]";
		}

	}

}
