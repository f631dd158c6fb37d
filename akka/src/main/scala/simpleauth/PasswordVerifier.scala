package simpleauth

/**
 * Checks passwords against the stored hashes ([[PasswordHashes]], contract §4) and counts every check in
 * `simpleauth_password_checks_total` by scheme and result. CPU- and memory-heavy (argon2id m=19 MiB): callers run
 * the argon2id runs on the password dispatcher. Thread-safe.
 */
final class PasswordVerifier(metrics: Metrics) {

  def verify(password: String, stored: String): Verification = {
    val scheme = PasswordHashes.schemeOf(stored)
    val result = PasswordHashes.verify(password, stored)
    // An unusable hash (a disabled user, an unknown scheme) costs what an unknown user costs, so that timing
    // does not tell such an account from a missing one; counted once, under its own scheme.
    if (result.isInstanceOf[Verification.Unusable]) equalise(password)
    metrics.passwordCheck(scheme, result)
    result
  }

  /** Burns the same work as checking an argon2id user, for unknown usernames; counted as the `dummy` scheme. */
  def verifyUnknownUser(password: String): Unit = {
    equalise(password)
    metrics.passwordCheck(PasswordScheme.Dummy, Verification.Mismatch) // no password matches the dummy hash
  }

  /**
   * The decoy after a legacy HMAC mismatch (contract §8): the same argon2id work as the unknown user's dummy, so that a
   * wrong password costs one argon2id run whatever the stored scheme; not counted (the mismatch was, once).
   */
  def decoy(password: String): Unit = equalise(password)

  private val equalisations = new java.util.concurrent.atomic.LongAdder

  /** How many times the dummy argon2id work ran (unknown users, unusable hashes, decoys); for tests. */
  private[simpleauth] def equalisationCount: Long = equalisations.sum()

  private def equalise(password: String): Unit = {
    PasswordHashes.verify(password, PasswordHashes.DummyArgon2idHash)
    equalisations.increment()
  }
}
