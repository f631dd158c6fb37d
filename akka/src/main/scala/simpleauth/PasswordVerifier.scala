package simpleauth

import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.util.Base64
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec
import org.bouncycastle.crypto.generators.Argon2BytesGenerator
import org.bouncycastle.crypto.params.Argon2Parameters
import scala.util.control.NonFatal

/**
 * Verifies `$argon2id$...` and the legacy `$hmac-sha256$salt$hash` strings (contract §4).
 * Stateless and thread-safe: every call builds its own Mac / generator, because
 * JCA `Mac` and `MessageDigest` instances must not be shared between threads.
 * CPU- and memory-heavy (argon2id m=19 MiB): callers run it on the hashing dispatcher.
 * Every check is counted in `simpleauth_password_checks_total` by scheme and result.
 */
final class PasswordVerifier(metrics: Metrics) {
  import PasswordVerifier.*

  def verify(password: String, stored: String): Verification = {
    val scheme = schemeOf(stored)
    val result = check(password, stored, scheme)
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

  private val equalisations = new java.util.concurrent.atomic.LongAdder

  /** How many times the dummy argon2id work ran (unknown users and unusable hashes); for tests. */
  private[simpleauth] def equalisationCount: Long = equalisations.sum()

  private def equalise(password: String): Unit = {
    check(password, DummyArgon2idHash, PasswordScheme.Argon2id)
    equalisations.increment()
  }

  private def check(password: String, stored: String, scheme: PasswordScheme): Verification =
    try
      parse(stored, scheme) match {
        case Left(reason)                                   => Verification.Unusable(reason)
        case Right(ParsedHash.Hmac(salt, expected))         => outcome(verifyHmac(password, salt, expected))
        case Right(ParsedHash.Argon2id(m, t, p, salt, exp)) => outcome(verifyArgon2id(password, m, t, p, salt, exp))
      }
    catch {
      case NonFatal(e) => Verification.Unusable(s"unusable hash (${e.getClass.getSimpleName})")
    }

  private def verifyHmac(password: String, salt: Array[Byte], expected: Array[Byte]): Boolean = {
    val mac = Mac.getInstance("HmacSHA256") // one per call: Mac is not thread-safe
    mac.init(new SecretKeySpec(salt, "HmacSHA256"))
    MessageDigest.isEqual(mac.doFinal(password.getBytes(StandardCharsets.UTF_8)), expected)
  }

  private def verifyArgon2id(password: String, m: Int, t: Int, p: Int, salt: Array[Byte], expected: Array[Byte]): Boolean = {
    val generator = new Argon2BytesGenerator()
    generator.init(
      new Argon2Parameters.Builder(Argon2Parameters.ARGON2_id)
        .withVersion(Argon2Parameters.ARGON2_VERSION_13)
        .withMemoryAsKB(m)
        .withIterations(t)
        .withParallelism(p)
        .withSalt(salt)
        .withBlockPool(Argon2Memory.pool) // the working memory reused, not allocated per check
        .build()
    )
    val actual = new Array[Byte](expected.length)
    generator.generateBytes(password.getBytes(StandardCharsets.UTF_8), actual)
    MessageDigest.isEqual(actual, expected)
  }

  private def outcome(matched: Boolean): Verification = if (matched) Verification.Match else Verification.Mismatch
}

object PasswordVerifier {
  private val MaxMemoryKiB = 1024 * 1024 // 1 GiB

  /** A stored string read, not yet checked against a password. */
  private enum ParsedHash {
    case Hmac(salt: Array[Byte], expected: Array[Byte])
    case Argon2id(m: Int, t: Int, p: Int, salt: Array[Byte], expected: Array[Byte])
  }

  private def schemeOf(stored: String): PasswordScheme =
    if (stored.startsWith("$argon2id$")) PasswordScheme.Argon2id
    else if (stored.startsWith("$hmac-sha256$")) PasswordScheme.HmacSha256
    else PasswordScheme.Unknown

  /**
   * Whether a login would count `stored` as `unusable` (a disabled user's marker, an unknown scheme, a malformed
   * hash), read without computing anything: such a user cannot refresh either (contract §7).
   */
  def isUnusable(stored: String): Boolean = parse(stored, schemeOf(stored)).isLeft

  /**
   * Whether checking a password against `stored` runs argon2id — a stored argon2id hash, or the dummy run of an
   * unusable one — and so needs a permit of the overload limit (contract §8); only a well-formed legacy HMAC hash
   * does not.
   */
  def runsArgon2id(stored: String): Boolean = parse(stored, schemeOf(stored)) match {
    case Right(_: ParsedHash.Hmac) => false
    case _                         => true
  }

  private def parse(stored: String, scheme: PasswordScheme): Either[String, ParsedHash] = scheme match {
    case PasswordScheme.HmacSha256 => parseHmac(stored)
    case PasswordScheme.Argon2id   => parseArgon2id(stored)
    case _                         => Left("unknown hash scheme")
  }

  private def parseHmac(stored: String): Either[String, ParsedHash] =
    for {
      fields   <- stored.split("\\$", -1) match { // "", "hmac-sha256", salt, hash
                    case Array("", _, salt, hash) => Right((salt, hash))
                    case _                        => Left("legacy hash: expected $hmac-sha256$<salt>$<hash>")
                  }
      salt     <- decodeB64(fields._1).filter(_.nonEmpty).toRight("legacy hash: salt is not base64")
      expected <- decodeB64(fields._2).filter(_.length == 32).toRight("legacy hash: hash is not 32 bytes of base64")
    } yield ParsedHash.Hmac(salt, expected)

  private def parseArgon2id(stored: String): Either[String, ParsedHash] =
    for {
      fields <- stored.split("\\$", -1) match { // "", "argon2id", "v=19", "m=..,t=..,p=..", salt, hash
                  case Array("", _, version, params, salt, hash) => Right((version, params, salt, hash))
                  case _                                         => Left("argon2id: expected 6 fields")
                }
      (version, params, saltB64, hashB64) = fields
      _ <- Either.cond(version == "v=19", (), "argon2id: only version 19 is supported")
      mtp <- params.split(",", -1).toList.map(_.split("=", 2).toList) match {
               case List(List("m", m), List("t", t), List("p", p)) =>
                 (parseInt(m), parseInt(t), parseInt(p)) match {
                   case (Some(m0), Some(t0), Some(p0)) => Right((m0, t0, p0))
                   case _                              => Left("argon2id: bad parameters")
                 }
               case _ => Left("argon2id: expected m=..,t=..,p=..")
             }
      (m, t, p) = mtp
      // Bounds keep one bad row from exhausting memory or CPU.
      _ <- Either.cond(p >= 1 && p <= 64 && t >= 1 && t <= 64 && m >= 8 * p && m <= MaxMemoryKiB, (),
             "argon2id: parameters out of range")
      salt     <- decodeB64(saltB64).filter(_.length >= 8).toRight("argon2id: salt is not base64 of 8+ bytes")
      expected <- decodeB64(hashB64).filter(h => h.length >= 4 && h.length <= 1024).toRight("argon2id: hash is not base64 of 4..1024 bytes")
    } yield ParsedHash.Argon2id(m, t, p, salt, expected)

  /**
   * A well-formed argon2id hash with the default parameters for new users
   * (m=19456, t=2, p=1) that no password matches in practice; verifying against
   * it costs what a wrong password for a real argon2id user costs.
   */
  val DummyArgon2idHash: String =
    "$argon2id$v=19$m=19456,t=2,p=1$c2ltcGxlLWF1dGgtZHVtIQ$ZHVtbXktaGFzaC1mb3ItdW5rbm93bi11c2Vycy0hISE"

  private def parseInt(s: String): Option[Int] =
    if (s.nonEmpty && s.length <= 10 && s.forall(c => c >= '0' && c <= '9')) s.toIntOption else None

  /** Standard alphabet, padding optional (argon2 omits it, the legacy scheme keeps it). */
  private def decodeB64(s: String): Option[Array[Byte]] =
    if (s.isEmpty || !s.forall(c => c.isLetterOrDigit && c < 128 || c == '+' || c == '/' || c == '=')) None
    else
      try Some(Base64.getDecoder.decode(s))
      catch { case _: IllegalArgumentException => None }
}
