package simpleauth

import com.nimbusds.jose.{JOSEObjectType, JWSHeader}
import com.nimbusds.jwt.{JWTClaimsSet, SignedJWT}
import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.time.Instant
import java.util.{Base64, Date, UUID}

/**
 * Signs the access and ID tokens (contract §2) with the one signing key, in the algorithm its type decides (RS256,
 * ES256 or EdDSA), through [[JcaJwsSigner]]: the JCA, so ACCP signs when it is installed ([[NativeCrypto]]). The
 * signer keeps one `java.security.Signature` per thread, so one `TokenSigner` serves all threads. `signed` is told the
 * nanoseconds each pair took (the stacks' `simpleauth_token_signing_duration_seconds`).
 */
final class TokenSigner(
    key: SigningKey,
    issuer: String,
    audience: String,
    ttlSeconds: Long,
    signed: Long => Unit = _ => (),
    clock: () => Instant = () => Instant.now()
) {
  /** The RFC 7638 thumbprint of the public key: the tokens' `kid` and the JWK's. */
  val kid: String = key.kid

  val algorithm: KeyAlgorithm = key.algorithm

  private val signer = new JcaJwsSigner(key.algorithm.jws, key.algorithm.jcaSignature, key.privateKey)

  /** The JCA provider that signs, e.g. "AmazonCorrettoCryptoProvider 2.5.0". */
  val provider: String = signer.provider

  private val idHeader = new JWSHeader.Builder(key.algorithm.jws).`type`(JOSEObjectType.JWT).keyID(kid).build()
  // RFC 9068 §2.1: the access token says what it is, so that it cannot pass for an ID token.
  private val accessHeader = new JWSHeader.Builder(key.algorithm.jws).`type`(TokenSigner.AccessTokenType).keyID(kid).build()

  /**
   * A token pair for `user` in the session `sid` (the refresh-token family, contract §2 and §7). The access token's
   * `aud` is the resource (`audience`, JWT_AUDIENCE) and its `client_id` is `clientId` (RFC 9068 §2.2); the ID token's
   * `aud` is the client, `clientId` (OIDC Core §2).
   */
  def issue(user: User, clientId: String, sid: UUID): TokenPair = issueAt(user, clientId, sid, clock())

  /** [[issue]] at the instant `at` (the tokens' `iat`), for a caller that keeps its own clock. */
  def issueAt(user: User, clientId: String, sid: UUID, at: Instant): TokenPair = {
    val start = System.nanoTime()
    val now = at.getEpochSecond
    val iat = new Date(now * 1000)
    val exp = new Date((now + ttlSeconds) * 1000)
    def common = new JWTClaimsSet.Builder()
      .issuer(issuer)
      .subject(user.id.toString)
      .issueTime(iat)
      .expirationTime(exp)
      .claim("sid", sid.toString)
      .jwtID(UUID.randomUUID().toString)
    val access = sign(accessHeader, common.audience(audience).claim("client_id", clientId).build())
    val id = sign(
      idHeader,
      common
        .audience(clientId)
        .claim("name", user.name)
        .claim("preferred_username", user.username)
        .claim("email", user.email)
        .claim("at_hash", TokenSigner.atHash(access, key.algorithm))
        .build()
    )
    signed(System.nanoTime() - start)
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
