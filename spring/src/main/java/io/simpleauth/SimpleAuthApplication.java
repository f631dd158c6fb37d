package io.simpleauth;

import java.util.function.Supplier;

import io.simpleauth.config.NativeCrypto;
import io.simpleauth.config.Settings;
import io.simpleauth.config.SettingsException;
import io.simpleauth.token.KeySet;
import sun.misc.Signal;
import sun.misc.SignalHandler;

import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.NestedExceptionUtils;

@SpringBootApplication
public class SimpleAuthApplication {

	public static void main(String[] args) {
		if (Boolean.getBoolean("spring.aot.processing")) {
			// `mvn package` runs Spring's AOT processing (process-aot), which calls this method only to learn the
			// bean graph and stops before anything starts. There is no environment at build time and none is
			// needed: the settings and the key set are singletons registered at run time by `registering`, not bean
			// definitions, so nothing of them is fixed into the generated code.
			SpringApplication.run(SimpleAuthApplication.class, args);
			return;
		}
		Settings settings = settingsOrExit();
		KeySet keys = keysOrExit(settings);
		exitZeroOnTermination();
		// SIGHUP would stop the JVM; until KeyReloadSignal takes it over (when the context starts), it does nothing. A
		// Java handler, not SIG_IGN: the JVM keeps an ignored shutdown signal ignored (nohup), so no handler could
		// take it over later.
		handle("HUP", signal -> {
		});
		SpringApplication app = new SpringApplication(SimpleAuthApplication.class);
		app.setBannerMode(Banner.Mode.OFF);
		app.setLogStartupInfo(false);
		app.setDefaultProperties(settings.springProperties());
		app.addInitializers(registering(settings, keys));
		try {
			app.run(args);
		}
		catch (Throwable ex) {
			System.err.println("simple-auth-spring: failed to start: " + rootCause(ex));
			System.exit(1);
		}
	}

	/**
	 * Binds and validates the environment. An invalid setting is one line on stderr and exit 2, not a failure report.
	 * Shared with {@code SignBench}, so that it signs with exactly the service's settings, key and provider.
	 */
	public static Settings settingsOrExit() {
		return orExit(() -> Settings.fromEnvironment(System.getenv()));
	}

	/**
	 * Installs the native crypto provider (if it loads), then reads the keys the settings name (signing key,
	 * JWT_PUBLIC_KEYS_FILE), or exits 2 with one line saying why not.
	 */
	public static KeySet keysOrExit(Settings settings) {
		// Before the key is parsed, and after the settings, so that a start refused for a setting does not load ACCP's
		// native library and run its self-tests. If ACCP cannot be loaded the JDK signs: StartupLog says so in one WARN
		// line (not here, so that a refused start stays one line on stderr), SignBench in its "provider" field.
		NativeCrypto.install();
		return orExit(() -> KeySet.load(settings));
	}

	private static <T> T orExit(Supplier<T> step) {
		try {
			return step.get();
		}
		catch (SettingsException ex) {
			System.err.println("simple-auth-spring: refusing to start: " + ex.getMessage());
			System.exit(2);
			throw new AssertionError("unreachable");
		}
	}

	/**
	 * Makes the validated settings and the key set read at start available as typed beans (KeyRing holds the keys
	 * in service from then on).
	 */
	public static ApplicationContextInitializer<ConfigurableApplicationContext> registering(Settings settings,
			KeySet keys) {
		return context -> {
			context.getBeanFactory().registerSingleton("settings", settings);
			context.getBeanFactory().registerSingleton("initialKeySet", keys);
		};
	}

	/**
	 * The JVM exits with 143/130 after SIGTERM/SIGINT even when its shutdown hooks (Spring's graceful
	 * shutdown, then closing the pool) complete normally; the contract asks for 0. System.exit(0) runs the
	 * same hooks.
	 */
	private static void exitZeroOnTermination() {
		for (String name : new String[] { "TERM", "INT" }) {
			handle(name, signal -> System.exit(0));
		}
	}

	private static void handle(String name, SignalHandler handler) {
		try {
			Signal.handle(new Signal(name), handler);
		}
		catch (IllegalArgumentException ex) {
			// Signal not available on this platform or reserved by the JVM: keep the default.
		}
	}

	static String version() {
		String version = SimpleAuthApplication.class.getPackage().getImplementationVersion();
		return version != null ? version : "dev";
	}

	private static String rootCause(Throwable ex) {
		Throwable root = NestedExceptionUtils.getMostSpecificCause(ex);
		String message = root.getMessage();
		return message != null ? message : root.getClass().getSimpleName();
	}

}
