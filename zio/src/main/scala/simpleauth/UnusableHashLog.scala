package simpleauth

import java.util.UUID

import zio.*

/**
 * A user whose stored hash is unusable (a disabled user, an unknown scheme) is a data problem to fix, not a
 * per-login event: WARN at the user's first refused login, DEBUG at every later one, never the hash itself. At most
 * `MaxReported` users are remembered; users beyond them are logged at DEBUG only, so the memory stays bounded.
 */
final class UnusableHashLog private (reported: Ref[Set[UUID]]):
  def report(userId: UUID, reason: String): UIO[Unit] =
    reported
      .modify(seen => if seen.size < UnusableHashLog.MaxReported && !seen(userId) then (true, seen + userId) else (false, seen))
      .flatMap { first =>
        if first then ZIO.logWarning(s"data error: user $userId has an unusable password hash ($reason); logins for this user are refused")
        else ZIO.logDebug(s"data error: user $userId has an unusable password hash ($reason)")
      }

object UnusableHashLog:
  val MaxReported = 10_000

  val make: UIO[UnusableHashLog] = Ref.make(Set.empty[UUID]).map(new UnusableHashLog(_))

  val live: ULayer[UnusableHashLog] = ZLayer(make)
