package simpleauth

import java.nio.charset.StandardCharsets
import java.security.{MessageDigest, SecureRandom}
import java.util.Base64
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec
import org.bouncycastle.crypto.generators.Argon2BytesGenerator
import org.bouncycastle.crypto.params.Argon2Parameters
import scala.util.control.NonFatal

/**
 * The stored password hashes of contract §4: `$argon2id$v=19$m=..,t=..,p=..$salt$hash` and the legacy
 * `$hmac-sha256$salt$hash`, read and checked. Pure and thread-safe: every call builds its own `Mac` / generator (JCA
 * `Mac` and `MessageDigest` instances must not be shared between threads). CPU- and memory-heavy for argon2id
 * (m=19 MiB): the stacks' `PasswordVerifier`s run it off their request threads, bounded, and count it.
 */
object PasswordHashes {
  private val MaxMemoryKiB = 1024 * 1024 // 1 GiB

  /** A stored string read, not yet checked against a password. */
  private enum ParsedHash {
    case Hmac(salt: Array[Byte], expected: Array[Byte])
    case Argon2id(m: Int, t: Int, p: Int, salt: Array[Byte], expected: Array[Byte])
  }

  /** The scheme a stored string names by its prefix (`unknown` for any other). */
  def schemeOf(stored: String): PasswordScheme =
    if (stored.startsWith("$argon2id$")) PasswordScheme.Argon2id
    else if (stored.startsWith("$hmac-sha256$")) PasswordScheme.HmacSha256
    else PasswordScheme.Unknown

  /** Checks `password` against `stored`; a string that is no usable hash is `Unusable`, never an exception. */
  def verify(password: String, stored: String): Verification =
    try
      parse(stored, schemeOf(stored)) match {
        case Left(reason)                                   => Verification.Unusable(reason)
        case Right(ParsedHash.Hmac(salt, expected))         => outcome(verifyHmac(password, salt, expected))
        case Right(ParsedHash.Argon2id(m, t, p, salt, exp)) => outcome(verifyArgon2id(password, m, t, p, salt, exp))
      }
    catch {
      case NonFatal(e) => Verification.Unusable(s"unusable hash (${e.getClass.getSimpleName})")
    }

  /**
   * Why a login would count `stored` as `unusable` (a disabled user's marker, an unknown scheme, a malformed hash),
   * read without computing anything, or None: such a user cannot refresh either (contract §7).
   */
  def unusable(stored: String): Option[String] = parse(stored, schemeOf(stored)).left.toOption

  def isUnusable(stored: String): Boolean = unusable(stored).isDefined

  /**
   * Whether checking a password against `stored` runs argon2id — a stored argon2id hash, or the dummy run of an
   * unusable one — and so needs a permit of the overload limit (contract §8); only a well-formed legacy HMAC hash
   * does not.
   */
  def runsArgon2id(stored: String): Boolean = parse(stored, schemeOf(stored)) match {
    case Right(_: ParsedHash.Hmac) => false
    case _                         => true
  }

  /**
   * A well-formed argon2id hash with the default parameters for new users (m=19456, t=2, p=1) that no password
   * matches in practice; verifying against it costs what a wrong password for a real argon2id user costs.
   */
  val DummyArgon2idHash: String =
    "$argon2id$v=19$m=19456,t=2,p=1$c2ltcGxlLWF1dGgtZHVtIQ$ZHVtbXktaGFzaC1mb3ItdW5rbm93bi11c2Vycy0hISE"

  /** A throw-away argon2id hash with the defaults for new users (m=19456, t=2, p=1) of a random secret. */
  def newDummyArgon2id(): String = {
    val random = new SecureRandom()
    val salt = new Array[Byte](16)
    random.nextBytes(salt)
    val secret = new Array[Byte](32)
    random.nextBytes(secret)
    val hash = argon2id(secret, 19456, 2, 1, salt, 32)
    val b64 = Base64.getEncoder.withoutPadding()
    s"$$argon2id$$v=19$$m=19456,t=2,p=1$$${b64.encodeToString(salt)}$$${b64.encodeToString(hash)}"
  }

  private def verifyHmac(password: String, salt: Array[Byte], expected: Array[Byte]): Boolean = {
    val mac = Mac.getInstance("HmacSHA256") // one per call: Mac is not thread-safe
    mac.init(new SecretKeySpec(salt, "HmacSHA256"))
    MessageDigest.isEqual(mac.doFinal(password.getBytes(StandardCharsets.UTF_8)), expected)
  }

  private def verifyArgon2id(password: String, m: Int, t: Int, p: Int, salt: Array[Byte], expected: Array[Byte]): Boolean =
    MessageDigest.isEqual(argon2id(password.getBytes(StandardCharsets.UTF_8), m, t, p, salt, expected.length), expected)

  private def argon2id(password: Array[Byte], m: Int, t: Int, p: Int, salt: Array[Byte], length: Int): Array[Byte] = {
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
    val actual = new Array[Byte](length)
    generator.generateBytes(password, actual)
    actual
  }

  private def outcome(matched: Boolean): Verification = if (matched) Verification.Match else Verification.Mismatch

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

  private def parseInt(s: String): Option[Int] =
    if (s.nonEmpty && s.length <= 10 && s.forall(c => c >= '0' && c <= '9')) s.toIntOption else None

  /** Standard alphabet, padding optional (argon2 omits it, the legacy scheme keeps it). */
  private def decodeB64(s: String): Option[Array[Byte]] =
    if (s.isEmpty || !s.forall(c => c.isLetterOrDigit && c < 128 || c == '+' || c == '/' || c == '=')) None
    else
      try Some(Base64.getDecoder.decode(s))
      catch { case _: IllegalArgumentException => None }
}
