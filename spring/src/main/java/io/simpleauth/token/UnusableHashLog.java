package io.simpleauth.token;

import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports a user whose stored hash is unusable (a data error) at WARN once per user and at DEBUG after that, so that a
 * client retrying such an account does not flood the log. Remembers at most {@value #MAX_REMEMBERED} users; beyond
 * that, reports of further users go to DEBUG only. Never logs the hash.
 */
final class UnusableHashLog {

	static final int MAX_REMEMBERED = 10_000;

	private static final Logger log = LoggerFactory.getLogger(UnusableHashLog.class);

	private final Set<UUID> reported = ConcurrentHashMap.newKeySet();

	private final int capacity;

	UnusableHashLog() {
		this(MAX_REMEMBERED);
	}

	UnusableHashLog(int capacity) {
		this.capacity = capacity;
	}

	/** Returns whether this report was the user's first, logged at WARN. */
	boolean report(UUID userId) {
		boolean first = this.reported.size() < this.capacity && this.reported.add(userId);
		if (first) {
			log.warn("data error: user {} has an unusable password_hash (unknown scheme or malformed); logins refused",
					userId);
		}
		else {
			log.debug("data error: user {} has an unusable password_hash; login refused", userId);
		}
		return first;
	}

}
