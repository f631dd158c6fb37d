package io.simpleauth.web;

/** The {@code error} member of every error body (RFC 6749 §5.2 and the contract's own), spelled here only. */
public enum ErrorCode {

	INVALID_REQUEST("invalid_request"), INVALID_GRANT("invalid_grant"), UNSUPPORTED_GRANT_TYPE("unsupported_grant_type"),
	TEMPORARILY_UNAVAILABLE("temporarily_unavailable"), SERVER_ERROR("server_error"), NOT_FOUND("not_found");

	private final String code;

	ErrorCode(String code) {
		this.code = code;
	}

	/** As written on the wire and in the {@code error} label of simpleauth_token_requests_total. */
	public String code() {
		return this.code;
	}

}
