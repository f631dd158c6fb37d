package simpleauth

import java.nio.charset.StandardCharsets.UTF_8
import java.security.{MessageDigest, SecureRandom}
import java.util.Base64
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

import org.bouncycastle.crypto.generators.Argon2BytesGenerator
import org.bouncycastle.crypto.params.Argon2Parameters

/** The pure hashing code, kept free of ZIO so the vector tests call it directly. */
object Hashes:
  private val b64        = Base64.getDecoder
  private val b64Padded  = Base64.getEncoder
  private val b64NoPad   = Base64.getEncoder.withoutPadding()
  private val ArgonVersion = 19
  // Sanity caps so a corrupt row cannot make one request allocate gigabytes.
  private val MaxMemoryKiB = 1 << 20
  private val MaxIterations = 64
  private val MaxLanes = 64

  /** A stored hash, parsed: what a check needs, nothing computed yet. */
  enum Parsed:
    case Hmac(salt: Array[Byte], expected: Array[Byte])
    case Argon2id(m: Int, t: Int, p: Int, salt: Array[Byte], expected: Array[Byte])

  def verify(password: String, stored: String): Verification =
    parse(stored) match
      case Left(reason) => Verification.Unusable(reason)
      case Right(Parsed.Hmac(salt, expected)) =>
        val mac = Mac.getInstance("HmacSHA256")
        mac.init(new SecretKeySpec(salt, "HmacSHA256"))
        result(MessageDigest.isEqual(mac.doFinal(password.getBytes(UTF_8)), expected))
      case Right(Parsed.Argon2id(m, t, p, salt, expected)) =>
        result(MessageDigest.isEqual(argon2id(password.getBytes(UTF_8), salt, m, t, p, expected.length), expected))

  /**
   * Why no password could ever match this stored hash (a disabled user's `$disabled$` marker, an unknown scheme, a
   * malformed string), without computing anything: a check of it would count `unusable` (§4, §7).
   */
  def unusable(stored: String): Option[String] = parse(stored).left.toOption

  def parse(stored: String): Either[String, Parsed] =
    if stored.startsWith("$argon2id$") then parseArgon2id(stored)
    else if stored.startsWith("$hmac-sha256$") then parseHmac(stored)
    else Left("unknown hash scheme")

  /** Strict standard Base64: the text must be exactly the canonical encoding of what it decodes to. */
  private def decode(s: String, padded: Boolean): Option[Array[Byte]] =
    try
      val bytes = b64.decode(s)
      val again = if padded then b64Padded.encodeToString(bytes) else b64NoPad.encodeToString(bytes)
      if bytes.nonEmpty && again == s then Some(bytes) else None
    catch case _: IllegalArgumentException => None

  private def result(ok: Boolean) = if ok then Verification.Match else Verification.Mismatch

  // $hmac-sha256$<salt>$<hash>
  private def parseHmac(stored: String): Either[String, Parsed] =
    stored.split("\\$", -1) match
      case Array("", "hmac-sha256", saltB64, hashB64) =>
        (decode(saltB64, padded = true), decode(hashB64, padded = true)) match
          case (Some(salt), Some(expected)) if expected.length == 32 => Right(Parsed.Hmac(salt, expected))
          case _ => Left("legacy hash: bad base64 salt or hash")
      case _ => Left("legacy hash: expected $hmac-sha256$<salt>$<hash>")

  private val ParamsPattern = """m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,10})""".r

  // $argon2id$v=19$m=<KiB>,t=<iterations>,p=<lanes>$<salt>$<hash>
  private def parseArgon2id(stored: String): Either[String, Parsed] =
    stored.split("\\$", -1) match
      case Array("", "argon2id", version, params, saltB64, hashB64) =>
        if version != s"v=$ArgonVersion" then Left("argon2id hash: unsupported version")
        else
          params match
            case ParamsPattern(ms, ts, ps) =>
              val (m, t, p) = (ms.toLong, ts.toLong, ps.toLong)
              if p < 1 || p > MaxLanes || t < 1 || t > MaxIterations || m < 8 * p || m > MaxMemoryKiB then
                Left("argon2id hash: parameters out of range")
              else
                (decode(saltB64, padded = false), decode(hashB64, padded = false)) match
                  case (Some(salt), Some(expected)) if salt.length >= 8 && expected.length >= 4 =>
                    Right(Parsed.Argon2id(m.toInt, t.toInt, p.toInt, salt, expected))
                  case _ => Left("argon2id hash: bad base64 salt or hash")
            case _ => Left("argon2id hash: bad parameters")
      case _ => Left("argon2id hash: expected $argon2id$v=19$m=..,t=..,p=..$<salt>$<hash>")

  def argon2id(password: Array[Byte], salt: Array[Byte], m: Int, t: Int, p: Int, length: Int): Array[Byte] =
    val params = new Argon2Parameters.Builder(Argon2Parameters.ARGON2_id)
      .withVersion(Argon2Parameters.ARGON2_VERSION_13)
      .withMemoryAsKB(m)
      .withIterations(t)
      .withParallelism(p)
      .withSalt(salt)
      .withBlockPool(Argon2Memory.pool) // the working memory reused, not allocated per check
      .build()
    val gen = new Argon2BytesGenerator()
    gen.init(params)
    val out = new Array[Byte](length)
    gen.generateBytes(password, out)
    out

  /** A throw-away argon2id hash with the defaults for new users (m=19456, t=2, p=1): the unknown-user decoy. */
  def newDummyArgon2id(): String =
    val rnd = new SecureRandom()
    val salt = new Array[Byte](16); rnd.nextBytes(salt)
    val secret = new Array[Byte](32); rnd.nextBytes(secret)
    val hash = argon2id(secret, salt, 19456, 2, 1, 32)
    s"$$argon2id$$v=19$$m=19456,t=2,p=1$$${b64NoPad.encodeToString(salt)}$$${b64NoPad.encodeToString(hash)}"
