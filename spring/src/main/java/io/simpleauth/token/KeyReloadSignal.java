package io.simpleauth.token;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;
import sun.misc.SignalHandler;

import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * SIGHUP reloads the keys ({@link KeyRing#reload}). The JVM's default for SIGHUP is to shut down; once this is
 * started, SIGHUP never stops the process (until then main holds it with a do-nothing handler, see SimpleAuthApplication). The JDK runs each
 * signal's handler on a thread of its own, so a reload never holds up a request.
 */
@Component
class KeyReloadSignal implements SmartLifecycle {

	private static final Logger log = LoggerFactory.getLogger(KeyReloadSignal.class);

	static final String SIGNAL = "HUP";

	private final KeyRing keys;

	private volatile boolean running;

	KeyReloadSignal(KeyRing keys) {
		this.keys = keys;
	}

	@Override
	public void start() {
		try {
			SignalHandler previous = Signal.handle(new Signal(SIGNAL), signal -> this.keys.reload());
			if (previous == SignalHandler.SIG_IGN) {
				// Started with SIGHUP ignored (nohup): the JVM keeps it so, and the handler above is not installed.
				log.warn("SIGHUP is ignored in this process (started by nohup?), so the keys cannot be reloaded");
			}
		}
		catch (IllegalArgumentException ex) {
			// No SIGHUP on this platform (or the JVM runs with -Xrs): the keys cannot be reloaded, the service runs on.
			log.warn("SIGHUP cannot be handled here, so the keys cannot be reloaded: {}", ex.getMessage());
		}
		this.running = true;
	}

	/** The handler stays: a SIGHUP during shutdown reloads keys nobody will use, rather than cutting the drain short. */
	@Override
	public void stop() {
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

}
