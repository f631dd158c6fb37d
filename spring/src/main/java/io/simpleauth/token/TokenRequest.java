package io.simpleauth.token;

/**
 * A validated password-grant request (username within 1–254 code points, password within 1–1024 UTF-8 bytes), and
 * the client it names: a {@code client_id} within the {@link io.simpleauth.config.ClientId} rule, or null when the request has none.
 */
public record TokenRequest(String username, String password, String clientId) {

	public TokenRequest(String username, String password) {
		this(username, password, null);
	}

	/** Never print the password. */
	@Override
	public String toString() {
		return "TokenRequest[username=" + this.username + ", clientId=" + this.clientId + "]";
	}

}
