package simpleauth

import java.nio.charset.StandardCharsets.UTF_8
import java.security.{MessageDigest, SecureRandom}
import java.util.{Base64, UUID}
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

import org.bouncycastle.crypto.generators.Argon2BytesGenerator
import org.bouncycastle.crypto.params.Argon2Parameters
import zio.*

/** Outcome of checking a password against a stored hash. */
enum Verification:
  case Match
  case Mismatch
  /** The stored string is not a usable hash: a data error, never the caller's fault. */
  case Unusable(reason: String)

/** Checks passwords against the PHC-style strings in `users.password_hash` (contract §4). */
trait PasswordVerifier:
  def verify(password: String, stored: String): UIO[Verification]
  /** Same work as a real argon2id check, for unknown users (no user enumeration by timing). */
  def verifyDummy(password: String): UIO[Unit]
  /**
   * The unknown user's argon2id check again, after `verify` found the stored hash unusable (a disabled user's
   * `$disabled$` marker, an unknown scheme): such an account answers no sooner than an unknown user. Not counted
   * as a check of its own, `verify` already counted the login as `unusable`.
   */
  def padUnusable(password: String): UIO[Unit]
  /** Logs a user's unusable stored hash at warning once, later logins of that user at debug: no log flooding. */
  def reportUnusable(userId: UUID, reason: String): UIO[Unit]

object PasswordVerifier:
  def verify(password: String, stored: String): URIO[PasswordVerifier, Verification] =
    ZIO.serviceWithZIO[PasswordVerifier](_.verify(password, stored))

  /** Beyond this many distinct users with an unusable hash, further ones are logged at debug only. */
  val MaxReported = 10_000

  /** One verification per core at a time: argon2id is CPU-bound and takes m KiB (19 MiB) per run. */
  val live: ULayer[PasswordVerifier] = ZLayer {
    for
      permits  <- ZIO.succeed(java.lang.Runtime.getRuntime.availableProcessors())
      limit    <- Semaphore.make(permits.toLong)
      dummy    <- ZIO.attemptBlocking(Hashes.newDummyArgon2id()).orDie
      reported <- Ref.make(Set.empty[UUID])
    yield Live(dummy, limit, reported)
  }

  /**
   * Verification runs on ZIO's blocking pool (never on Netty's event loop or ZIO's default executor), behind a
   * semaphore so a burst of logins queues instead of running hundreds of 19 MiB argon2id computations at once.
   * `check` is the hashing itself (`Hashes.verify`; tests count its calls).
   */
  final case class Live(
      dummyHash: String,
      limit: Semaphore,
      reported: Ref[Set[UUID]],
      check: (String, String) => Verification = Hashes.verify
  ) extends PasswordVerifier:
    def verify(password: String, stored: String): UIO[Verification] =
      (if stored.startsWith("$argon2id$") then costly(password, stored)
       else ZIO.succeed(check(password, stored))) // one HMAC-SHA256: microseconds, no need to hop threads
        .tap(ServiceMetrics.passwordChecked(stored, _))

    def verifyDummy(password: String): UIO[Unit] =
      costly(password, dummyHash) *> ServiceMetrics.dummyChecked

    def padUnusable(password: String): UIO[Unit] =
      costly(password, dummyHash).unit

    def reportUnusable(userId: UUID, reason: String): UIO[Unit] =
      reported
        .modify(seen => if seen.size < MaxReported && !seen(userId) then (true, seen + userId) else (false, seen))
        .flatMap { first =>
          if first then ZIO.logWarning(s"data error: user $userId has an unusable password hash ($reason); logins for this user are refused")
          else ZIO.logDebug(s"data error: user $userId has an unusable password hash ($reason)")
        }

    private def costly(password: String, stored: String): UIO[Verification] =
      limit.withPermit(ZIO.attemptBlocking(check(password, stored)).orDie)

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

  def verify(password: String, stored: String): Verification =
    if stored.startsWith("$argon2id$") then verifyArgon2id(password, stored)
    else if stored.startsWith("$hmac-sha256$") then verifyHmac(password, stored)
    else Verification.Unusable("unknown hash scheme")

  /** Strict standard Base64: the text must be exactly the canonical encoding of what it decodes to. */
  private def decode(s: String, padded: Boolean): Option[Array[Byte]] =
    try
      val bytes = b64.decode(s)
      val again = if padded then b64Padded.encodeToString(bytes) else b64NoPad.encodeToString(bytes)
      if bytes.nonEmpty && again == s then Some(bytes) else None
    catch case _: IllegalArgumentException => None

  private def result(ok: Boolean) = if ok then Verification.Match else Verification.Mismatch

  // $hmac-sha256$<salt>$<hash>
  private def verifyHmac(password: String, stored: String): Verification =
    stored.split("\\$", -1) match
      case Array("", "hmac-sha256", saltB64, hashB64) =>
        (decode(saltB64, padded = true), decode(hashB64, padded = true)) match
          case (Some(salt), Some(expected)) if expected.length == 32 =>
            val mac = Mac.getInstance("HmacSHA256")
            mac.init(new SecretKeySpec(salt, "HmacSHA256"))
            result(MessageDigest.isEqual(mac.doFinal(password.getBytes(UTF_8)), expected))
          case _ => Verification.Unusable("legacy hash: bad base64 salt or hash")
      case _ => Verification.Unusable("legacy hash: expected $hmac-sha256$<salt>$<hash>")

  private val ParamsPattern = """m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,10})""".r

  // $argon2id$v=19$m=<KiB>,t=<iterations>,p=<lanes>$<salt>$<hash>
  private def verifyArgon2id(password: String, stored: String): Verification =
    stored.split("\\$", -1) match
      case Array("", "argon2id", version, params, saltB64, hashB64) =>
        if version != s"v=$ArgonVersion" then Verification.Unusable("argon2id hash: unsupported version")
        else
          params match
            case ParamsPattern(ms, ts, ps) =>
              val (m, t, p) = (ms.toLong, ts.toLong, ps.toLong)
              if p < 1 || p > MaxLanes || t < 1 || t > MaxIterations || m < 8 * p || m > MaxMemoryKiB then
                Verification.Unusable("argon2id hash: parameters out of range")
              else
                (decode(saltB64, padded = false), decode(hashB64, padded = false)) match
                  case (Some(salt), Some(expected)) if salt.length >= 8 && expected.length >= 4 =>
                    val actual = argon2id(password.getBytes(UTF_8), salt, m.toInt, t.toInt, p.toInt, expected.length)
                    result(MessageDigest.isEqual(actual, expected))
                  case _ => Verification.Unusable("argon2id hash: bad base64 salt or hash")
            case _ => Verification.Unusable("argon2id hash: bad parameters")
      case _ => Verification.Unusable("argon2id hash: expected $argon2id$v=19$m=..,t=..,p=..$<salt>$<hash>")

  def argon2id(password: Array[Byte], salt: Array[Byte], m: Int, t: Int, p: Int, length: Int): Array[Byte] =
    val params = new Argon2Parameters.Builder(Argon2Parameters.ARGON2_id)
      .withVersion(Argon2Parameters.ARGON2_VERSION_13)
      .withMemoryAsKB(m)
      .withIterations(t)
      .withParallelism(p)
      .withSalt(salt)
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
