package simpleauth

import org.bouncycastle.crypto.generators.Argon2BytesGenerator
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class Argon2MemorySpec extends AnyWordSpec with Matchers {
  private val MiB = 1L << 20

  "Argon2Memory" should {
    "run one check at a time per 80 MiB of heap, at most one per core, never none" in {
      // -Xmx96m: Runtime.maxMemory() is a little under 96 MiB with the serial collector (one survivor space less).
      Argon2Memory.checksAtOnce(2, 92 * MiB) shouldBe 1
      Argon2Memory.checksAtOnce(1, 92 * MiB) shouldBe 1
      Argon2Memory.checksAtOnce(16, 40 * MiB) shouldBe 1
      Argon2Memory.checksAtOnce(2, 512 * MiB) shouldBe 2
      Argon2Memory.checksAtOnce(8, 250 * MiB) shouldBe 3
      Argon2Memory.checksAtOnce shouldBe Argon2Memory.checksAtOnce(Runtime.getRuntime.availableProcessors(), Runtime.getRuntime.maxMemory())
    }

    "hand out the blocks it was filled with and keep its size" in {
      val pool = Argon2Memory.filledPool(4)
      val taken = List.fill(4)(pool.allocate())
      val pooled = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap[Argon2BytesGenerator.Block, java.lang.Boolean])
      taken.foreach(pooled.add)
      pooled.size shouldBe 4
      val extra = pool.allocate() // beyond the pool: a new block
      pooled.contains(extra) shouldBe false
      taken.foreach(pool.deallocate)
      pool.deallocate(extra) // the pool is full: not kept
      List.fill(4)(pool.allocate()).forall(pooled.contains) shouldBe true
    }

    "give the vectors' answers through the pooled memory, run after run" in {
      val verifier = PasswordHashes
      val jane = "$argon2id$v=19$m=19456,t=2,p=1$/aNuSw+NVpEX1i/cSRL/0Q$7ANI+9Bn7BQexYE+jCxcw3Ys0DheKsm8wAf+7WstZAs"
      verifier.verify("CorrectHorse9!", jane) shouldBe Verification.Match
      verifier.verify("CorrectHorse9!", jane) shouldBe Verification.Match
      verifier.verify("wrong", jane) shouldBe Verification.Mismatch
    }
  }
}
