package io.simpleauth.password;

/**
 * What checking a password against a stored hash gives. {@link #UNUSABLE}: the stored string is no hash this service
 * can verify (a disabled user's marker, an unknown scheme, a malformed one); the login fails like a mismatch.
 */
public enum Verification {

	MATCH, MISMATCH, UNUSABLE

}
