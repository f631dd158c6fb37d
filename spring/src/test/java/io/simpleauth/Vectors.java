package io.simpleauth;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import io.simpleauth.config.Settings;
import io.simpleauth.token.SigningKey;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The project's shared test material in ../spec, read relative to the stack folder (Maven's working directory). */
public final class Vectors {

	public static final Path SPEC = Path.of("..", "spec");

	public static final Path DEV_KEY = SPEC.resolve("keys/dev-rsa-2048.pem");

	private static JsonNode vectors;

	private Vectors() {
	}

	public static synchronized JsonNode json() {
		if (vectors == null) {
			try {
				vectors = JsonMapper.shared().readTree(Files.readString(SPEC.resolve("vectors.json")));
			}
			catch (java.io.IOException ex) {
				throw new IllegalStateException("cannot read ../spec/vectors.json", ex);
			}
		}
		return vectors;
	}

	/** Settings as the service would read them with the dev key and otherwise the contract's defaults. */
	public static Settings settings(Map<String, String> overrides) {
		java.util.HashMap<String, String> env = new java.util.HashMap<>(overrides);
		env.putIfAbsent("JWT_PRIVATE_KEY_FILE", DEV_KEY.toString());
		return Settings.fromEnvironment(env);
	}

	/** The key those settings name. */
	public static SigningKey signingKey(Settings settings) {
		return SigningKey.fromPem(settings.signingKeyPem());
	}

}
