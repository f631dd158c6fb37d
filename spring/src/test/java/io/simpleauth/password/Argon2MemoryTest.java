package io.simpleauth.password;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import org.bouncycastle.crypto.generators.Argon2BytesGenerator;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class Argon2MemoryTest {

	private static final long MIB = 1L << 20;

	@Test
	void oneCheckAtATimePerEightyMibOfHeapAndAtMostOnePerCore() {
		// -Xmx96m: Runtime.maxMemory() is a little under 96 MiB with the serial collector (one survivor space less).
		assertThat(Argon2Memory.checksAtOnce(2, 92 * MIB)).isEqualTo(1);
		assertThat(Argon2Memory.checksAtOnce(1, 92 * MIB)).isEqualTo(1);
		assertThat(Argon2Memory.checksAtOnce(16, 40 * MIB)).as("never none").isEqualTo(1);
		assertThat(Argon2Memory.checksAtOnce(2, 512 * MIB)).as("at most one per core").isEqualTo(2);
		assertThat(Argon2Memory.checksAtOnce(8, 250 * MIB)).isEqualTo(3);
	}

	@Test
	void theProcessRunsAsManyChecksAsItsHeapAndCoresAllow() {
		assertThat(Argon2Memory.checksAtOnce()).isEqualTo(Argon2Memory.checksAtOnce(
				Runtime.getRuntime().availableProcessors(), Runtime.getRuntime().maxMemory()));
	}

	@Test
	void aFilledPoolHandsOutItsOwnBlocksAndKeepsItsSize() {
		Argon2BytesGenerator.BlockPool pool = Argon2Memory.filledPool(4);
		Map<Argon2BytesGenerator.Block, Boolean> pooled = new IdentityHashMap<>();
		List<Argon2BytesGenerator.Block> taken = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			taken.add(pool.allocate());
			pooled.put(taken.get(i), true);
		}
		assertThat(pooled).hasSize(4);
		Argon2BytesGenerator.Block extra = pool.allocate(); // beyond the pool: a new block
		assertThat(pooled).doesNotContainKey(extra);
		taken.forEach(pool::deallocate);
		pool.deallocate(extra); // the pool is full: not kept
		for (int i = 0; i < 4; i++) {
			assertThat(pooled).containsKey(pool.allocate());
		}
	}

	@Test
	void checksWithThePooledMemoryStillMatchTheVectors() {
		// The same hash twice through the pool (the second run on reused, cleared blocks).
		PasswordVerifier verifier = new PasswordVerifier(new io.simpleauth.metrics.Metrics(
				new io.micrometer.core.instrument.simple.SimpleMeterRegistry()));
		for (int i = 0; i < 2; i++) {
			assertThat(verifier.verify("CorrectHorse9!",
					"$argon2id$v=19$m=19456,t=2,p=1$/aNuSw+NVpEX1i/cSRL/0Q$7ANI+9Bn7BQexYE+jCxcw3Ys0DheKsm8wAf+7WstZAs"))
				.isEqualTo(Verification.MATCH);
		}
	}

}
