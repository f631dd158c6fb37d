package io.simpleauth.config;

/**
 * A setting that stops the service at start: reported as one line on stderr, never as a stack trace. Unchecked, so
 * that the settings' constructor and the Binder's converters can throw it.
 */
public class SettingsException extends RuntimeException {

	public SettingsException(String message) {
		super(message, null, false, false);
	}

}
