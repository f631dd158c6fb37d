package simpleauth

import zio.*

/** Checks passwords against the PHC-style strings in `users.password_hash` (contract §4). */
trait PasswordVerifier:
  /**
   * One check, counted in the metrics. An unusable stored hash (a disabled user's `$disabled$` marker, an unknown
   * scheme) costs the unknown user's decoy argon2id run before `Unusable` is returned, so such an account answers
   * no sooner than an unknown user; it is counted once, as `unusable`.
   */
  def verify(password: String, storedHash: String): UIO[Verification]
  /** The same work as a real argon2id check, for an unknown user (no user enumeration by timing); counted as `dummy`. */
  def verifyUnknownUser(password: String): UIO[Unit]

object PasswordVerifier:
  def verify(password: String, storedHash: String): URIO[PasswordVerifier, Verification] =
    ZIO.serviceWithZIO[PasswordVerifier](_.verify(password, storedHash))

  /** One verification per core at a time: argon2id is CPU-bound and takes m KiB (19 MiB) per run. */
  val live: ULayer[PasswordVerifier] = ZLayer {
    for
      permits <- ZIO.succeed(java.lang.Runtime.getRuntime.availableProcessors())
      limit   <- Semaphore.make(permits.toLong)
      decoy   <- ZIO.attemptBlocking(Hashes.newDummyArgon2id()).orDie
    yield Live(decoy, limit)
  }

  /**
   * argon2id runs on ZIO's blocking pool (never on Netty's event loop or ZIO's default executor), behind a
   * semaphore so a burst of logins queues instead of running hundreds of 19 MiB argon2id computations at once.
   * `check` is the hashing itself (`Hashes.verify`; tests count its calls).
   */
  final case class Live(
      dummyHash: String,
      limit: Semaphore,
      check: (String, String) => Verification = Hashes.verify
  ) extends PasswordVerifier:
    def verify(password: String, storedHash: String): UIO[Verification] =
      (if storedHash.startsWith("$argon2id$") then costly(password, storedHash)
       else ZIO.succeed(check(password, storedHash))) // one HMAC-SHA256: microseconds, no need to hop threads
        .tap(Metrics.passwordChecked(storedHash, _))
        .tap {
          case Verification.Unusable(_) => decoy(password)
          case _                        => ZIO.unit
        }

    def verifyUnknownUser(password: String): UIO[Unit] =
      decoy(password) *> Metrics.dummyChecked

    private def decoy(password: String): UIO[Unit] = costly(password, dummyHash).unit

    private def costly(password: String, stored: String): UIO[Verification] =
      limit.withPermit(ZIO.attemptBlocking(check(password, stored)).orDie)
