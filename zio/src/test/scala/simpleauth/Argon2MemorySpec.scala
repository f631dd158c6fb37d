package simpleauth

import org.bouncycastle.crypto.generators.Argon2BytesGenerator
import zio.*
import zio.test.*

object Argon2MemorySpec extends ZIOSpecDefault:
  private val MiB = 1L << 20

  def spec = suite("Argon2Memory")(
    test("one check at a time per 80 MiB of heap, at most one per core, never none") {
      // -Xmx96m: Runtime.maxMemory() is a little under 96 MiB with the serial collector (one survivor space less).
      assertTrue(
        Argon2Memory.checksAtOnce(2, 92 * MiB) == 1,
        Argon2Memory.checksAtOnce(1, 92 * MiB) == 1,
        Argon2Memory.checksAtOnce(16, 40 * MiB) == 1,
        Argon2Memory.checksAtOnce(2, 512 * MiB) == 2,
        Argon2Memory.checksAtOnce(8, 250 * MiB) == 3,
        Argon2Memory.checksAtOnce ==
          Argon2Memory.checksAtOnce(java.lang.Runtime.getRuntime.availableProcessors(), java.lang.Runtime.getRuntime.maxMemory())
      )
    },
    test("a filled pool hands out the blocks it was filled with and keeps its size") {
      val pool   = Argon2Memory.filledPool(4)
      val taken  = List.fill(4)(pool.allocate())
      val pooled = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap[Argon2BytesGenerator.Block, java.lang.Boolean])
      taken.foreach(pooled.add)
      val extra = pool.allocate() // beyond the pool: a new block
      val extraWasNew = !pooled.contains(extra)
      taken.foreach(pool.deallocate)
      pool.deallocate(extra) // the pool is full: not kept
      val again = List.fill(4)(pool.allocate())
      assertTrue(pooled.size == 4, extraWasNew, again.forall(pooled.contains))
    },
    test("the vectors' answers through the pooled memory, run after run") {
      val jane = "$argon2id$v=19$m=19456,t=2,p=1$/aNuSw+NVpEX1i/cSRL/0Q$7ANI+9Bn7BQexYE+jCxcw3Ys0DheKsm8wAf+7WstZAs"
      assertTrue(
        Hashes.verify("CorrectHorse9!", jane) == Verification.Match,
        Hashes.verify("CorrectHorse9!", jane) == Verification.Match,
        Hashes.verify("wrong", jane) == Verification.Mismatch
      )
    }
  )
