package simpleauth

import zio.*

/**
 * Overload shedding (contract §8): at most `max` (`MAX_PASSWORD_CHECKS`) argon2id checks are admitted at once,
 * running or waiting for a core. A check that finds no permit free is not queued: `admit` answers None at once and
 * the request gets 503 with `Retry-After: 1`. A permit is held for the whole check and given back however it ends
 * (success, failure, interruption) — ZIO's `Semaphore.tryWithPermit`.
 */
final class PasswordCheckLimit private (permits: Semaphore, val max: Int):
  /** `check` under a permit, or None at once if none is free. */
  def admit[R, E, A](check: ZIO[R, E, A]): ZIO[R, E, Option[A]] = permits.tryWithPermit(check)

  /** Permits free now (for tests). */
  def available: UIO[Long] = permits.available

object PasswordCheckLimit:
  def make(max: Int): UIO[PasswordCheckLimit] = Semaphore.make(max.toLong).map(new PasswordCheckLimit(_, max))
