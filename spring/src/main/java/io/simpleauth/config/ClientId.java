package io.simpleauth.config;

/**
 * The rule of a {@code client_id} (RFC 6749 §2.2, Appendix A's VSCHAR): 1–128 characters of printable ASCII,
 * {@code %x20-7E}. The same for a request's {@code client_id} and for {@code DEFAULT_CLIENT_ID}.
 */
public final class ClientId {

	public static final int MAX_LENGTH = 128;

	/** Says what {@link #isValid} checks, for error descriptions and refusals. */
	public static final String RULE = "1-" + MAX_LENGTH + " printable ASCII characters (%x20-7E)";

	private ClientId() {
	}

	public static boolean isValid(String clientId) {
		if (clientId == null || clientId.isEmpty() || clientId.length() > MAX_LENGTH) {
			return false;
		}
		for (int i = 0; i < clientId.length(); i++) {
			char c = clientId.charAt(i);
			if (c < 0x20 || c > 0x7E) {
				return false;
			}
		}
		return true;
	}

}
