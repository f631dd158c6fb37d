package simpleauth

import java.nio.charset.StandardCharsets
import java.security.{MessageDigest, SecureRandom}
import java.util.Base64

/**
 * Refresh tokens (contract §7): 32 bytes from a cryptographically secure generator, base64url without padding,
 * so 43 characters of `[A-Za-z0-9_-]`. Only their SHA-256 (over the 43 ASCII characters) is stored.
 */
object RefreshToken {
  val Bytes = 32
  val Length = 43

  private val encoder = Base64.getUrlEncoder.withoutPadding()

  /** The process's generator: `SecureRandom` is thread-safe, one instance serves every request. */
  private val Random = new SecureRandom()

  /** A new token from `random`. */
  def generate(random: SecureRandom = Random): String = {
    val bytes = new Array[Byte](Bytes)
    random.nextBytes(bytes)
    encode(bytes)
  }

  /** The token of 32 random bytes: base64url without padding. */
  def encode(bytes: Array[Byte]): String = encoder.encodeToString(bytes)

  /** Whether `token` has the shape of a refresh token; anything else is refused without asking the database. */
  def isWellFormed(token: String): Boolean =
    token.length == Length && token.forall(c =>
      (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')

  /** What `refresh_tokens.token_hash` holds: SHA-256 over the token's ASCII octets. */
  def hash(token: String): Array[Byte] =
    MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.US_ASCII)) // one per call: not thread-safe
}
