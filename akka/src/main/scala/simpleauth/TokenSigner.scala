package simpleauth

import com.nimbusds.jose.{JOSEObjectType, JWSHeader, JWSSigner}
import com.nimbusds.jose.crypto.{ECDSASigner, RSASSASigner}
import com.nimbusds.jwt.{JWTClaimsSet, SignedJWT}
import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.security.interfaces.ECPrivateKey
import java.time.Instant
import java.util.{Base64, Date, UUID}

/**
 * Signs the access and ID tokens (contract §2) with the one signing key, in the algorithm its type decides:
 * RS256 (Nimbus `RSASSASigner`), ES256 (Nimbus `ECDSASigner`, the 64-byte R‖S JOSE form) or EdDSA
 * ([[JcaEd25519Signer]]). All three go through the JCA, so ACCP signs when it is installed ([[NativeCrypto]]).
 * Nimbus' signers create a fresh `java.security.Signature` per call and the EdDSA one keeps one per thread,
 * so one signer serves all threads. The time to sign each pair goes to `simpleauth_token_signing_duration_seconds`.
 */
final class TokenSigner(
    key: SigningKey,
    issuer: String,
    audience: String,
    ttlSeconds: Long,
    metrics: Metrics,
    clock: () => Instant = () => Instant.now()
) {
  /** The RFC 7638 thumbprint of the public key: the tokens' `kid` and the JWK's. */
  val kid: String = key.kid

  val algorithm: KeyAlgorithm = key.algorithm

  private val signer: JWSSigner = key.algorithm match {
    case KeyAlgorithm.RS256 => new RSASSASigner(key.privateKey)
    case KeyAlgorithm.ES256 => new ECDSASigner(key.privateKey.asInstanceOf[ECPrivateKey])
    case KeyAlgorithm.EdDSA => new JcaEd25519Signer(key.privateKey)
  }

  /** The JCA provider that signs, e.g. "AmazonCorrettoCryptoProvider 2.5.0". */
  val provider: String = signer match {
    case ed: JcaEd25519Signer => ed.provider
    case _                    => NativeCrypto.signatureProvider(key.algorithm.jcaSignature, key.privateKey)
  }

  private val idHeader = new JWSHeader.Builder(key.algorithm.jws).`type`(JOSEObjectType.JWT).keyID(kid).build()
  // RFC 9068 §2.1: the access token says what it is, so that it cannot pass for an ID token.
  private val accessHeader = new JWSHeader.Builder(key.algorithm.jws).`type`(TokenSigner.AccessTokenType).keyID(kid).build()

  /**
   * A token pair for `user` in the session `sid` (the refresh-token family, contract §2 and §7); the access
   * token's `client_id` is `clientId` (RFC 9068 §2.2).
   */
  def issue(user: User, clientId: String, sid: UUID): TokenPair = {
    val start = System.nanoTime()
    val now = clock().getEpochSecond
    val iat = new Date(now * 1000)
    val exp = new Date((now + ttlSeconds) * 1000)
    def common = new JWTClaimsSet.Builder()
      .issuer(issuer)
      .audience(audience)
      .subject(user.id.toString)
      .issueTime(iat)
      .expirationTime(exp)
      .claim("sid", sid.toString)
      .jwtID(UUID.randomUUID().toString)
    val access = sign(accessHeader, common.claim("client_id", clientId).build())
    val id = sign(
      idHeader,
      common
        .claim("name", user.name)
        .claim("preferred_username", user.username)
        .claim("email", user.email)
        .claim("at_hash", TokenSigner.atHash(access, key.algorithm))
        .build()
    )
    metrics.tokenPairSigned(System.nanoTime() - start)
    TokenPair(access, id, ttlSeconds)
  }

  private def sign(header: JWSHeader, claims: JWTClaimsSet): String = {
    val jwt = new SignedJWT(header, claims)
    jwt.sign(signer)
    jwt.serialize()
  }
}

object TokenSigner {
  val AccessTokenType = new JOSEObjectType("at+jwt")

  /**
   * OIDC Core §3.1.3.6: base64url of the left-most half of the algorithm's hash over the ASCII access token —
   * 128 bits of SHA-256 for RS256 and ES256, 256 bits of SHA-512 for EdDSA with Ed25519.
   */
  def atHash(accessToken: String, algorithm: KeyAlgorithm): String = {
    val digest = MessageDigest.getInstance(algorithm.atHashDigest).digest(accessToken.getBytes(StandardCharsets.US_ASCII))
    Base64.getUrlEncoder.withoutPadding.encodeToString(java.util.Arrays.copyOf(digest, digest.length / 2))
  }
}
