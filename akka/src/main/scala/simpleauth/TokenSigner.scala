package simpleauth

import com.nimbusds.jose.{JOSEObjectType, JWSAlgorithm, JWSHeader}
import com.nimbusds.jose.crypto.RSASSASigner
import com.nimbusds.jose.jwk.{JWKSet, KeyUse, RSAKey}
import com.nimbusds.jwt.{JWTClaimsSet, SignedJWT}
import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.time.Instant
import java.util.{Base64, Date, UUID}

/**
 * Signs the access and ID tokens (contract §2) with RS256. `RSASSASigner` creates
 * a fresh `java.security.Signature` per call, so one signer serves all threads.
 * The time to sign each pair goes to `simpleauth_token_signing_duration_seconds`.
 */
final class TokenSigner(
    key: SigningKey,
    issuer: String,
    audience: String,
    ttlSeconds: Long,
    metrics: Metrics,
    clock: () => Instant = () => Instant.now()
) {
  private val publicKey: RSAKey = new RSAKey.Builder(key.publicKey)
    .keyUse(KeyUse.SIGNATURE)
    .algorithm(JWSAlgorithm.RS256)
    .keyIDFromThumbprint() // RFC 7638: SHA-256 over {"e","kty","n"}, base64url
    .build()

  /** The RFC 7638 thumbprint of the public key: the tokens' `kid` and the JWK's. */
  val kid: String = publicKey.getKeyID

  private val keySet = new JWKSet(publicKey)

  /** The public key set served at /.well-known/jwks.json: the one signing key, `use` sig, `alg` RS256. */
  def jwks(): JWKSet = keySet

  private val signer = new RSASSASigner(key.privateKey)
  private val header = new JWSHeader.Builder(JWSAlgorithm.RS256).`type`(JOSEObjectType.JWT).keyID(kid).build()

  def issue(user: User): TokenPair = {
    val start = System.nanoTime()
    val now = clock().getEpochSecond
    val iat = new Date(now * 1000)
    val exp = new Date((now + ttlSeconds) * 1000)
    val sid = UUID.randomUUID().toString
    def common = new JWTClaimsSet.Builder()
      .issuer(issuer)
      .audience(audience)
      .subject(user.id.toString)
      .issueTime(iat)
      .expirationTime(exp)
      .claim("sid", sid)
      .jwtID(UUID.randomUUID().toString)
    val access = sign(common.build())
    val id = sign(
      common
        .claim("name", user.name)
        .claim("preferred_username", user.username)
        .claim("email", user.email)
        .claim("at_hash", TokenSigner.atHash(access))
        .build()
    )
    metrics.tokenPairSigned(System.nanoTime() - start)
    TokenPair(access, id, ttlSeconds)
  }

  private def sign(claims: JWTClaimsSet): String = {
    val jwt = new SignedJWT(header, claims)
    jwt.sign(signer)
    jwt.serialize()
  }
}

object TokenSigner {
  /** OIDC Core §3.1.3.6: base64url(left-most 128 bits of SHA-256(ASCII(access_token))). */
  def atHash(accessToken: String): String = {
    val digest = MessageDigest.getInstance("SHA-256").digest(accessToken.getBytes(StandardCharsets.US_ASCII))
    Base64.getUrlEncoder.withoutPadding.encodeToString(java.util.Arrays.copyOf(digest, 16))
  }
}
