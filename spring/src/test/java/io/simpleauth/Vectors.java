package io.simpleauth;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.simpleauth.config.Settings;
import io.simpleauth.token.KeySet;
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
			catch (IOException ex) {
				throw new IllegalStateException("cannot read ../spec/vectors.json", ex);
			}
		}
		return vectors;
	}

	/** vectors.json's {@code keys[]}: every dev signing key (rsa-2048, rsa-4096, p-256, ed25519). */
	public static List<JsonNode> keys() {
		List<JsonNode> keys = new ArrayList<>();
		json().get("keys").forEach(keys::add);
		return keys;
	}

	/** The {@code keys[]} entry of one key type. */
	public static JsonNode key(String type) {
		return keys().stream()
			.filter(k -> k.get("type").stringValue().equals(type))
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("no dev key of type " + type));
	}

	/** The file of a {@code keys[]} entry (or any spec path such as "keys/dev-public-keys.pem"). */
	public static Path file(String specPath) {
		return SPEC.resolve(specPath);
	}

	/** Settings as the service would read them with the dev key and otherwise the contract's defaults. */
	public static Settings settings(Map<String, String> overrides) {
		HashMap<String, String> env = new HashMap<>(overrides);
		env.putIfAbsent("JWT_PRIVATE_KEY_FILE", DEV_KEY.toString());
		return Settings.fromEnvironment(env);
	}

	/** The key those settings name. */
	public static SigningKey signingKey(Settings settings) {
		return SigningKey.fromPem(settings.signingKeyPem());
	}

	/** The key set those settings name (signing key and JWT_PUBLIC_KEYS_FILE), as main reads it. */
	public static KeySet keySet(Settings settings) {
		return KeySet.load(settings);
	}

	/** A spec file's text. */
	public static String read(String specPath) {
		try {
			return Files.readString(file(specPath));
		}
		catch (IOException ex) {
			throw new IllegalStateException("cannot read ../spec/" + specPath, ex);
		}
	}

}
