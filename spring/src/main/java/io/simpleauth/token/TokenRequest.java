package io.simpleauth.token;

/** A validated password-grant request (username within 1–254 code points, password within 1–1024 UTF-8 bytes). */
public record TokenRequest(String username, String password) {

	/** Never print the password. */
	@Override
	public String toString() {
		return "TokenRequest[username=" + this.username + "]";
	}

}
