package simpleauth

import org.bouncycastle.crypto.generators.Argon2BytesGenerator

/**
 * argon2id's working memory on the project's small fixed heap (96 MiB, the same in the three JVM stacks). A check with
 * the default parameters (m=19456 KiB) works in 19,456 blocks of 1 KiB. Allocated per check, under load each check's
 * blocks outlive a young collection, are promoted, fill the old generation, and the serial collector falls into full
 * collections one after the other (the fault suite's flood showed full-collection pauses back to back). So:
 *  - the blocks come from one pool, Bouncy Castle's `FixedBlockPool`, filled at start and reused by every check (a
 *    check with other parameters takes what it needs beyond it, and the pool keeps its size);
 *  - the checks that run at once (akka's password dispatcher, zio's semaphore) are bounded by the heap as well as the
 *    cores: one working set per 80 MiB of heap, at most one per core. With 96 MiB that is one, whatever the cores (the
 *    actix and axum stacks hold one per core, outside any heap).
 */
object Argon2Memory {

  /** Blocks of a check with the default parameters for new users and the dummy (m=19456 KiB). */
  val DefaultBlocks: Int = 19456

  /** Heap per concurrent check: its 19 MiB working set and room for everything else. */
  val HeapPerCheck: Long = 80L << 20

  def checksAtOnce(cores: Int, maxHeapBytes: Long): Int =
    math.max(1L, math.min(cores.toLong, maxHeapBytes / HeapPerCheck)).toInt

  /** argon2id checks run at once in this process. */
  val checksAtOnce: Int = checksAtOnce(Runtime.getRuntime.availableProcessors(), Runtime.getRuntime.maxMemory())

  /** The process's pool of argon2 blocks, filled when this object is first used (at start). */
  lazy val pool: Argon2BytesGenerator.BlockPool = filledPool(checksAtOnce * DefaultBlocks)

  private[simpleauth] def filledPool(blocks: Int): Argon2BytesGenerator.BlockPool = {
    val pool = new Argon2BytesGenerator.FixedBlockPool(blocks)
    for (_ <- 0 until blocks) pool.deallocate(new Argon2BytesGenerator.Block())
    pool
  }
}
