package simpleauth

import java.nio.charset.StandardCharsets.US_ASCII
import java.security.{MessageDigest, SecureRandom}
import java.util.Base64

/**
 * Refresh tokens (contract §7): 32 bytes from the platform's CSPRNG, base64url without padding — 43 characters of
 * `[A-Za-z0-9_-]`. Only the SHA-256 of those 43 ASCII characters is stored; the token itself never is.
 */
object RefreshToken:
  val Length = 43

  private val random  = new SecureRandom()
  private val encoder = Base64.getUrlEncoder.withoutPadding()

  /** A new token. `SecureRandom` is thread-safe; one instance serves every request. */
  def generate(): String =
    val bytes = new Array[Byte](32)
    random.nextBytes(bytes)
    encode(bytes)

  def encode(bytes: Array[Byte]): String = encoder.encodeToString(bytes)

  /** The shape every token we issue has; anything else is refused without asking the database. */
  def isWellFormed(token: String): Boolean =
    token.length == Length && token.forall(c =>
      (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
    )

  /** What `refresh_tokens.token_hash` holds: SHA-256 over the token's ASCII characters. */
  def hash(token: String): Array[Byte] =
    MessageDigest.getInstance("SHA-256").digest(token.getBytes(US_ASCII))
