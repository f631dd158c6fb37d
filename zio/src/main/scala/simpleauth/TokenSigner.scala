package simpleauth

import java.nio.charset.StandardCharsets.US_ASCII
import java.security.{KeyFactory, MessageDigest}
import java.security.interfaces.{RSAPrivateCrtKey, RSAPublicKey}
import java.security.spec.{PKCS8EncodedKeySpec, RSAPublicKeySpec}
import java.util.{Base64, UUID}

import com.nimbusds.jose.{JOSEObjectType, JWSAlgorithm, JWSHeader, JWSObject, Payload}
import com.nimbusds.jose.crypto.RSASSASigner
import com.nimbusds.jose.jwk.{KeyUse, RSAKey}
import zio.*
import zio.json.ast.Json

/** Signs the access/ID token pair and publishes the public key (contract §2, §3). */
trait TokenSigner:
  def kid: String
  /** The `/.well-known/jwks.json` document, rendered once. */
  def jwks: String
  def issue(user: User): UIO[TokenPair]

object TokenSigner:
  val live: ZLayer[Settings, SettingsError, TokenSigner] = ZLayer {
    for
      cfg <- ZIO.service[Settings]
      key <- ZIO.fromEither(RsaKeys.load(cfg.privateKeyPem.stringValue)).mapError(SettingsError(_))
    yield Live(key, cfg.issuer, cfg.audience, cfg.tokenTtlSeconds)
  }

  final case class Live(key: RSAKey, issuer: String, audience: String, ttlSeconds: Long) extends TokenSigner:
    val kid: String = key.getKeyID
    private val signer = new RSASSASigner(key.toRSAPrivateKey)
    private val header = new JWSHeader.Builder(JWSAlgorithm.RS256).`type`(JOSEObjectType.JWT).keyID(kid).build()

    /**
     * Nimbus' own `JWKSet.toString` gives the same members and values but in `HashMap` order (kty, e, use, kid, alg,
     * n), not the order of spec/vectors.json and the other three stacks; so the document is written here from
     * Nimbus' values in the contract's order (README, "Tokens"; VectorsSpec checks both claims).
     */
    val jwks: String =
      Json.Obj(
        "keys" -> Json.Arr(
          Json.Obj(
            "kty" -> Json.Str("RSA"),
            "use" -> Json.Str("sig"),
            "alg" -> Json.Str("RS256"),
            "kid" -> Json.Str(kid),
            "n"   -> Json.Str(key.getModulus.toString),
            "e"   -> Json.Str(key.getPublicExponent.toString)
          )
        )
      ).toString

    private def sign(claims: Json.Obj): String =
      val jws = new JWSObject(header, new Payload(claims.toString))
      jws.sign(signer)
      jws.serialize()

    def issue(user: User): UIO[TokenPair] =
      Clock.instant.flatMap { now =>
        ZIO.succeed {
          val iat = now.getEpochSecond
          val exp = iat + ttlSeconds
          val sid = UUID.randomUUID().toString
          def common(jti: String) = Chunk(
            "iss" -> Json.Str(issuer),
            "aud" -> Json.Str(audience),
            "sub" -> Json.Str(user.id.toString),
            "iat" -> Json.Num(iat),
            "exp" -> Json.Num(exp),
            "sid" -> Json.Str(sid),
            "jti" -> Json.Str(jti)
          )
          val access = sign(Json.Obj(common(UUID.randomUUID().toString)))
          val id = sign(
            Json.Obj(
              common(UUID.randomUUID().toString) ++ Chunk(
                "name"               -> Json.Str(user.name),
                "preferred_username" -> Json.Str(user.username),
                "email"              -> Json.Str(user.email),
                "at_hash"            -> Json.Str(RsaKeys.atHash(access))
              )
            )
          )
          TokenPair(access, id, ttlSeconds)
        } @@ Metrics.tokenSigningDuration
      }

/** PEM loading with the contract's refusals, the RFC 7638 kid and at_hash. */
object RsaKeys:
  private val MinBits = 2048

  def load(pem: String): Either[String, RSAKey] =
    val text = pem.trim
    if text.contains("-----BEGIN RSA PRIVATE KEY-----") then
      Left("JWT private key is PKCS#1 (BEGIN RSA PRIVATE KEY); convert it to PKCS#8: openssl pkcs8 -topk8 -nocrypt")
    else if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") then
      Left("JWT private key is encrypted; an unencrypted PKCS#8 PEM (BEGIN PRIVATE KEY) is required")
    else
      val begin = "-----BEGIN PRIVATE KEY-----"
      val end   = "-----END PRIVATE KEY-----"
      val b = text.indexOf(begin)
      val e = text.indexOf(end)
      if b < 0 || e < b then Left("JWT private key is not a PKCS#8 PEM (expected -----BEGIN PRIVATE KEY-----)")
      else
        val body = text.substring(b + begin.length, e).replaceAll("\\s", "")
        try
          val der = Base64.getDecoder.decode(body)
          KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(der)) match
            case k: RSAPrivateCrtKey =>
              if k.getModulus.bitLength < MinBits then
                Left(s"JWT private key is RSA ${k.getModulus.bitLength} bits; at least $MinBits are required")
              else
                val pub = KeyFactory
                  .getInstance("RSA")
                  .generatePublic(new RSAPublicKeySpec(k.getModulus, k.getPublicExponent))
                  .asInstanceOf[RSAPublicKey]
                Right(
                  new RSAKey.Builder(pub)
                    .privateKey(k)
                    .keyIDFromThumbprint() // RFC 7638, SHA-256
                    .keyUse(KeyUse.SIGNATURE)
                    .algorithm(JWSAlgorithm.RS256)
                    .build()
                )
            case _ => Left("JWT private key is not an RSA key with CRT parameters")
        catch
          case _: IllegalArgumentException              => Left("JWT private key PEM has invalid base64")
          case _: java.security.spec.InvalidKeySpecException => Left("JWT private key is not an RSA PKCS#8 key (EC and other key types are refused)")
          case e: com.nimbusds.jose.JOSEException        => Left(s"JWT private key: cannot compute its thumbprint (${e.getMessage})")

  /** OIDC Core §3.1.3.6: base64url(left half of SHA-256(ASCII(access_token))). */
  def atHash(accessToken: String): String =
    val digest = MessageDigest.getInstance("SHA-256").digest(accessToken.getBytes(US_ASCII))
    Base64.getUrlEncoder.withoutPadding.encodeToString(java.util.Arrays.copyOf(digest, 16))
