package io.simpleauth.password;

import org.bouncycastle.crypto.generators.Argon2BytesGenerator;

/**
 * argon2id's working memory on the project's small fixed heap (96 MiB, the same in the three JVM stacks). A check with
 * the default parameters (m=19456 KiB) works in 19,456 blocks of 1 KiB. Allocated per check, under load each check's
 * blocks outlive a young collection, are promoted, fill the old generation, and the serial collector falls into full
 * collections one after the other (under the fault suite's flood, pauses back to back for seconds, while the other
 * client's logins waited). So:
 * <ul>
 * <li>the blocks come from one pool, Bouncy Castle's {@link Argon2BytesGenerator.FixedBlockPool}, filled at start and
 * reused by every check (a check with other parameters takes what it needs beyond it and the pool keeps its size);</li>
 * <li>the checks that run at once are bounded by the heap as well as the cores: one working set per 80 MiB of heap, at
 * most one per core. With 96 MiB that is one, whatever the cores (the actix and axum stacks hold one per core, outside
 * any heap).</li>
 * </ul>
 */
public final class Argon2Memory {

	/** Blocks of a check with the default parameters for new users and the dummy (m=19456 KiB). */
	static final int DEFAULT_BLOCKS = 19456;

	/** Heap per concurrent check: its 19 MiB working set and room for everything else. */
	static final long HEAP_PER_CHECK = 80L << 20;

	private static final int CHECKS_AT_ONCE = checksAtOnce(Runtime.getRuntime().availableProcessors(),
			Runtime.getRuntime().maxMemory());

	private Argon2Memory() {
	}

	/** argon2id checks run at once in this process (the password-check pool's threads). */
	public static int checksAtOnce() {
		return CHECKS_AT_ONCE;
	}

	static int checksAtOnce(int cores, long maxHeapBytes) {
		return (int) Math.max(1, Math.min(cores, maxHeapBytes / HEAP_PER_CHECK));
	}

	/** The process's pool of argon2 blocks. */
	static Argon2BytesGenerator.BlockPool pool() {
		return Pool.POOL;
	}

	/** Filled when first asked for (the holder idiom): not by a process that only asks how many checks run at once. */
	private static final class Pool {

		static final Argon2BytesGenerator.BlockPool POOL = filledPool(CHECKS_AT_ONCE * DEFAULT_BLOCKS);

	}

	static Argon2BytesGenerator.BlockPool filledPool(int blocks) {
		Argon2BytesGenerator.FixedBlockPool pool = new Argon2BytesGenerator.FixedBlockPool(blocks);
		for (int i = 0; i < blocks; i++) {
			pool.deallocate(new Argon2BytesGenerator.Block());
		}
		return pool;
	}

}
