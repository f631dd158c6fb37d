package simpleauth

import zio.*

/** Checks passwords against the PHC-style strings in `users.password_hash` (contract §4). */
trait PasswordVerifier:
  /**
   * One check, counted in the metrics. An unusable stored hash (a disabled user's `$disabled$` marker, an unknown
   * scheme) costs the unknown user's decoy argon2id run before `Unusable` is returned, and so does a legacy HMAC
   * mismatch (§8), so every wrong password costs one argon2id run whatever the account; each is counted once (as
   * `unusable`, or `hmac-sha256`/`mismatch`). Fails with `TemporarilyUnavailable` when an argon2id run (a decoy
   * included) is shed (§8, counted as `overload`); a legacy match needs no permit.
   */
  def verify(password: String, storedHash: String): IO[ApiError, Verification]
  /** The same work as a real argon2id check, for an unknown user (no user enumeration by timing); counted as `dummy`. */
  def verifyUnknownUser(password: String): IO[ApiError, Unit]

object PasswordVerifier:
  def verify(password: String, storedHash: String): ZIO[PasswordVerifier, ApiError, Verification] =
    ZIO.serviceWithZIO[PasswordVerifier](_.verify(password, storedHash))

  /**
   * At most `Argon2Memory.checksAtOnce` verifications at a time (one per core, and one per 19 MiB working set the heap
   * holds: one with the 96 MiB heap): argon2id is CPU-bound and takes m KiB (19 MiB) per run. At most
   * `MAX_PASSWORD_CHECKS` are admitted at once, running or waiting for their turn.
   */
  val live: URLayer[Settings, PasswordVerifier] = ZLayer {
    for
      cfg       <- ZIO.service[Settings]
      cores     <- Semaphore.make(Argon2Memory.checksAtOnce.toLong)
      admission <- PasswordCheckLimit.make(cfg.limits.maxPasswordChecks)
      decoy     <- ZIO.attemptBlocking(PasswordHashes.newDummyArgon2id()).orDie
    yield Live(decoy, cores, admission)
  }

  /**
   * argon2id runs on ZIO's blocking pool (never on Netty's event loop or ZIO's default executor), behind a
   * semaphore so a burst of logins queues for a core instead of running hundreds of 19 MiB argon2id computations at
   * once; and before that behind `admission`, which sheds a check at once when `MAX_PASSWORD_CHECKS` are already
   * admitted, so the queue stays short (about four argon2id times with the default). The legacy HMAC check is
   * microseconds and bounded by neither. `check` is the hashing itself (the core's `PasswordHashes.verify`; tests count
   * its calls).
   */
  final case class Live(
      dummyHash: String,
      limit: Semaphore,
      admission: PasswordCheckLimit,
      check: (String, String) => Verification = PasswordHashes.verify
  ) extends PasswordVerifier:
    def verify(password: String, storedHash: String): IO[ApiError, Verification] =
      (if storedHash.startsWith("$argon2id$") then costly(password, storedHash)
       else ZIO.succeed(check(password, storedHash))) // one HMAC-SHA256: microseconds, no need to hop threads
        .tap {
          case Verification.Unusable(_)                                  => decoy(password)
          case Verification.Mismatch if !storedHash.startsWith("$argon2id$") => decoy(password) // a legacy HMAC mismatch
          case _                                                         => ZIO.unit
        }
        .tap(Metrics.passwordChecked(storedHash, _))

    def verifyUnknownUser(password: String): IO[ApiError, Unit] =
      decoy(password) *> Metrics.dummyChecked

    private def decoy(password: String): IO[ApiError, Unit] = costly(password, dummyHash).unit

    private def costly(password: String, stored: String): IO[ApiError, Verification] =
      admission
        .admit(limit.withPermit(ZIO.attemptBlocking(check(password, stored)).orDie))
        .someOrElseZIO(Metrics.rejected(Metrics.Rejection.Overload) *> ZIO.fail(ApiError.TemporarilyUnavailable))
