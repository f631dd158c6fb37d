package simpleauth

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}
import spray.json.*

/** The shared test vectors and dev keys of ../spec (tests run in their project's folder: scala-core/, akka/). */
object Vectors {
  val specDir: Path = Paths.get("..", "spec")

  lazy val json: JsObject =
    JsonParser(new String(Files.readAllBytes(specDir.resolve("vectors.json")), StandardCharsets.UTF_8)).asJsObject

  final case class PasswordVector(name: String, password: String, hash: String, valid: Boolean, malformed: Boolean)

  lazy val passwords: Vector[PasswordVector] =
    json.fields("passwords").asInstanceOf[JsArray].elements.map { v =>
      val f = v.asJsObject.fields
      PasswordVector(
        f("name").asInstanceOf[JsString].value,
        f("password").asInstanceOf[JsString].value,
        f("hash").asInstanceOf[JsString].value,
        f("valid") == JsTrue,
        f.get("malformed").contains(JsTrue)
      )
    }

  /** A signing key of vectors.json: its type, file, algorithm, at_hash digest, kid and public JWK. */
  final case class KeyVector(keyType: String, file: String, alg: String, atHashDigest: String, kid: String, jwk: JsObject)

  private def str(m: Map[String, JsValue], k: String) = m(k).asInstanceOf[JsString].value

  lazy val keys: Vector[KeyVector] =
    json.fields("keys").asInstanceOf[JsArray].elements.map { v =>
      val f = v.asJsObject.fields
      KeyVector(str(f, "type"), str(f, "file"), str(f, "alg"), str(f, "at_hash_digest"), str(f, "kid"), f("jwk").asJsObject)
    }

  def key(keyType: String): KeyVector = keys.find(_.keyType == keyType).getOrElse(sys.error(s"no key $keyType"))

  /** `public_key_bundle`: the bundle file, the signing key it is published with, and the JWKS to expect. */
  lazy val publicKeyBundle: (String, String, JsObject) = {
    val f = json.fields("public_key_bundle").asJsObject.fields
    (str(f, "file"), str(f, "signing_key"), f("jwks").asJsObject)
  }

  /** (alg, access token, at_hash). */
  lazy val atHashes: Vector[(String, String, String)] =
    json.fields("at_hash").asInstanceOf[JsArray].elements.map { v =>
      val f = v.asJsObject.fields
      (str(f, "alg"), str(f, "access_token"), str(f, "at_hash"))
    }

  /** `refresh_tokens.valid`: (the 32 bytes, the token, its SHA-256), hex where bytes. */
  lazy val validRefreshTokens: Vector[(String, String, String)] =
    json.fields("refresh_tokens").asJsObject.fields("valid").asInstanceOf[JsArray].elements.map { v =>
      val f = v.asJsObject.fields
      (str(f, "bytes_hex"), str(f, "token"), str(f, "sha256_hex"))
    }

  /** `refresh_tokens.malformed`: (name, token). */
  lazy val malformedRefreshTokens: Vector[(String, String)] =
    json.fields("refresh_tokens").asJsObject.fields("malformed").asInstanceOf[JsArray].elements.map { v =>
      val f = v.asJsObject.fields
      (str(f, "name"), str(f, "token"))
    }

  def pem(relative: String): String =
    new String(Files.readAllBytes(specDir.resolve(relative)), StandardCharsets.US_ASCII)

  def signingKey(relative: String): SigningKey =
    Keys.parsePrivateKey(pem(relative)).fold(e => sys.error(s"$relative: ${e.message}"), identity)

  lazy val devKey: SigningKey = signingKey("keys/dev-rsa-2048.pem")

  /**
   * Whether `token`'s signature verifies with `key`'s public JWK, by a verifier independent of the signer:
   * Nimbus' RSA and ECDSA verifiers (the ECDSA one takes the 64-byte R||S form only), the JDK's SunEC for Ed25519.
   */
  def verifies(token: String, key: SigningKey): Boolean = {
    import com.nimbusds.jose.crypto.{ECDSAVerifier, RSASSAVerifier}
    import com.nimbusds.jose.jwk.{ECKey, OctetKeyPair, RSAKey}
    val jwt = com.nimbusds.jwt.SignedJWT.parse(token)
    key.publicJwk match {
      case rsa: RSAKey => jwt.verify(new RSASSAVerifier(rsa))
      case ec: ECKey   => jwt.verify(new ECDSAVerifier(ec))
      case okp: OctetKeyPair =>
        val spkiPrefix = java.util.HexFormat.of().parseHex("302a300506032b6570032100")
        val pub = java.security.KeyFactory.getInstance("Ed25519", "SunEC")
          .generatePublic(new java.security.spec.X509EncodedKeySpec(spkiPrefix ++ okp.getX.decode()))
        val signature = java.security.Signature.getInstance("Ed25519", "SunEC")
        signature.initVerify(pub)
        signature.update(jwt.getSigningInput)
        signature.verify(jwt.getSignature.decode())
      case other => sys.error(s"unexpected ${other.getKeyType}")
    }
  }
}
