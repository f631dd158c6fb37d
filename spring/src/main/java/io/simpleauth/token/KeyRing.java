package io.simpleauth.token;

import java.util.concurrent.atomic.AtomicReference;

import io.simpleauth.config.Settings;
import io.simpleauth.config.SettingsException;
import io.simpleauth.metrics.Metrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.stereotype.Component;

/**
 * The key set in service, and its replacement on SIGHUP (spec/README §5, Key rotation; see {@link KeyReloadSignal}).
 * One immutable {@link KeySet} behind an {@link AtomicReference}: a reader takes one snapshot and uses it throughout,
 * a reload swaps the whole set in one step. A reload that fails leaves the set in service as it is.
 */
@Component
public class KeyRing {

	private static final Logger log = LoggerFactory.getLogger(KeyRing.class);

	private final AtomicReference<KeySet> current;

	private final Settings settings;

	private final Metrics metrics;

	/** {@code initial} is the set main read at start (registered as a singleton, see SimpleAuthApplication). */
	public KeyRing(KeySet initial, Settings settings, Metrics metrics) {
		this.current = new AtomicReference<>(initial);
		this.settings = settings;
		this.metrics = metrics;
	}

	/** The key set in service now; keep the reference for everything that must agree (a token pair, one answer). */
	public KeySet current() {
		return this.current.get();
	}

	/**
	 * Reads the signing key and {@code JWT_PUBLIC_KEYS_FILE} again, with the start-up rules, and puts them in service.
	 * Success: one info line (kid, alg, number of published keys), {@code result="success"}. Anything refused or
	 * failing: the old keys stay, one error line names the problem (never key material), {@code result="failure"}.
	 * Synchronized, so two signals in a row reload one after the other. Returns whether the new keys are in service.
	 */
	public synchronized boolean reload() {
		KeySet next;
		try {
			next = KeySet.load(this.settings);
		}
		catch (SettingsException ex) {
			return failed(ex.getMessage());
		}
		catch (RuntimeException ex) {
			// Not a refusal we wrote: its class and message only, no stack trace, one line.
			return failed(ex.getClass().getSimpleName() + ": " + ex.getMessage());
		}
		this.current.set(next);
		this.metrics.keyReload(true);
		log.info("keys reloaded: kid={} alg={} published_keys={}", next.kid(), next.algorithm(), next.published().size());
		return true;
	}

	private boolean failed(String why) {
		this.metrics.keyReload(false);
		KeySet kept = this.current.get();
		log.error("key reload failed, the keys in service stay (kid={} alg={}): {}", kept.kid(), kept.algorithm(),
				why.replace('\n', ' '));
		return false;
	}

}
