package io.simpleauth.config;

/** A setting that stops the service at start: reported as one line on stderr, never as a stack trace. */
public class InvalidSettingsException extends Exception {

	public InvalidSettingsException(String message) {
		super(message, null, false, false);
	}

}
