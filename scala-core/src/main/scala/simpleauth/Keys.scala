package simpleauth

import com.nimbusds.jose.JWSAlgorithm
import com.nimbusds.jose.jwk.{Curve, ECKey, JWK, KeyUse, OctetKeyPair, RSAKey}
import com.nimbusds.jose.util.Base64URL
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}
import java.security.{KeyFactory, PrivateKey, PublicKey}
import java.security.interfaces.{ECPrivateKey, ECPublicKey, RSAPrivateCrtKey, RSAPublicKey}
import java.security.spec.{ECPoint, ECPublicKeySpec, PKCS8EncodedKeySpec, RSAPublicKeySpec, X509EncodedKeySpec}
import java.util.Base64
import org.bouncycastle.asn1.{ASN1ObjectIdentifier, ASN1OctetString}
import org.bouncycastle.asn1.pkcs.{PKCSObjectIdentifiers, PrivateKeyInfo}
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo
import org.bouncycastle.asn1.x9.{ECNamedCurveTable, X9ObjectIdentifiers}
import org.bouncycastle.crypto.params.Ed25519PrivateKeyParameters
import scala.util.control.NonFatal

/**
 * The three signing algorithms of the contract (§2); the key decides which one.
 *
 * @param jcaSignature the JCA signature the signer uses (ACCP provides all three, see [[NativeCrypto]])
 * @param atHashDigest the digest whose left half is the ID token's `at_hash` (OIDC Core §3.1.3.6)
 */
enum KeyAlgorithm(val jws: JWSAlgorithm, val jcaSignature: String, val atHashDigest: String) {
  case RS256 extends KeyAlgorithm(JWSAlgorithm.RS256, "SHA256withRSA", "SHA-256")
  // The P1363 form: the 64-byte R‖S that JOSE wants (RFC 7518 §3.4), so nothing is transcoded from DER.
  case ES256 extends KeyAlgorithm(JWSAlgorithm.ES256, "SHA256withECDSAinP1363Format", "SHA-256")
  case EdDSA extends KeyAlgorithm(JWSAlgorithm.EdDSA, "Ed25519", "SHA-512")

  /** The JOSE name: `RS256`, `ES256`, `EdDSA`. */
  def name: String = jws.getName
}

/**
 * The private key that signs the tokens, with its public JWK (`use` sig, `alg`, `kid` the RFC 7638
 * thumbprint) and the algorithm its type decides.
 */
final case class SigningKey(privateKey: PrivateKey, publicJwk: JWK, algorithm: KeyAlgorithm) {
  def kid: String = publicJwk.getKeyID
  override def toString: String = s"SigningKey(${algorithm.name}, kid $kid)"
}

/** What one load of the keys gives: the signing key and the keys of `JWT_PUBLIC_KEYS_FILE`, in file order. */
final case class KeyMaterial(signing: SigningKey, published: List[JWK])

/** Where the private key comes from: a file (read again on every reload) or the environment (fixed). */
enum PrivateKeySource {
  case File(path: String)
  case Inline(pem: String)

  def describe: String = this match {
    case File(path) => s"JWT_PRIVATE_KEY_FILE ($path)"
    case Inline(_)  => "JWT_PRIVATE_KEY"
  }
}

/** The key files of the environment, read at start and again on SIGHUP (contract §5, *Key rotation*). */
final case class KeySources(privateKey: PrivateKeySource, publicKeysFile: Option[String]) {

  /** Reads and checks both, with the start-up rules; ACCP installed first ([[NativeCrypto.install]]). */
  def load(): Either[SettingsError, KeyMaterial] = {
    NativeCrypto.install()
    for {
      signing   <- loadPrivateKey()
      published <- loadPublicKeys()
    } yield KeyMaterial(signing, published)
  }

  private def loadPrivateKey(): Either[SettingsError, SigningKey] = {
    val pem = privateKey match {
      case PrivateKeySource.File(path) => Keys.readFile("JWT_PRIVATE_KEY_FILE", path)
      case PrivateKeySource.Inline(text) => Right(text.replace("\\n", "\n")) // stores often flatten newlines to "\n"
    }
    pem.flatMap(text => Keys.parsePrivateKey(text).left.map(e => SettingsError(s"${privateKey.describe}: ${e.message}")))
  }

  private def loadPublicKeys(): Either[SettingsError, List[JWK]] =
    publicKeysFile match {
      case None => Right(Nil)
      case Some(path) =>
        Keys.readFile("JWT_PUBLIC_KEYS_FILE", path).flatMap(text =>
          Keys.parsePublicKeys(text).left.map(e => SettingsError(s"JWT_PUBLIC_KEYS_FILE ($path): ${e.message}")))
    }
}

/**
 * PEM keys of the three accepted types (contract §2, §5): PKCS#8 private keys and SPKI public keys of RSA
 * (at least 2048 bits), EC P-256 and Ed25519. The key's type is read from its ASN.1 algorithm identifier
 * (BouncyCastle's ASN.1 classes, not its JCA provider); the keys themselves are made by the JCA
 * `KeyFactory` first in line, ACCP's for RSA and EC, so that they stay native keys. Every refusal is one
 * line naming the problem, never the key's bytes.
 */
object Keys {
  val MinRsaBits = 2048

  private val PrivateBegin = "-----BEGIN PRIVATE KEY-----"
  private val PrivateEnd = "-----END PRIVATE KEY-----"
  private val Pem = """(?s)-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----""".r

  private val RsaOid = PKCSObjectIdentifiers.rsaEncryption
  private val EcOid = X9ObjectIdentifiers.id_ecPublicKey
  private val P256Oid = X9ObjectIdentifiers.prime256v1
  private val Ed25519Oid = new ASN1ObjectIdentifier("1.3.101.112") // RFC 8410
  private val Ed448Oid = new ASN1ObjectIdentifier("1.3.101.113")

  private[simpleauth] def readFile(variable: String, path: String): Either[SettingsError, String] =
    try Right(new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.US_ASCII))
    catch { case NonFatal(e) => Left(SettingsError(s"$variable cannot be read: $path (${e.getClass.getSimpleName})")) }

  /** A PKCS#8 PEM private key (`BEGIN PRIVATE KEY`) of an accepted type. */
  def parsePrivateKey(pem: String): Either[SettingsError, SigningKey] =
    if (pem.contains("-----BEGIN RSA PRIVATE KEY-----"))
      refuse("PKCS#1 key (BEGIN RSA PRIVATE KEY) refused; convert it with `openssl pkcs8 -topk8 -nocrypt`")
    else if (pem.contains("-----BEGIN EC PRIVATE KEY-----"))
      refuse("SEC 1 key (BEGIN EC PRIVATE KEY) refused; convert it with `openssl pkcs8 -topk8 -nocrypt`")
    else if (pem.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
      refuse("encrypted PKCS#8 keys are not supported; give an unencrypted PKCS#8 PEM (BEGIN PRIVATE KEY)")
    else {
      val start = pem.indexOf(PrivateBegin)
      val end = pem.indexOf(PrivateEnd)
      if (start < 0 || end < start) refuse("not a PKCS#8 PEM private key (expected BEGIN PRIVATE KEY)")
      else
        decodeBase64(pem.substring(start + PrivateBegin.length, end)).flatMap { der =>
          val info =
            try Right(PrivateKeyInfo.getInstance(der))
            catch { case NonFatal(_) => Left(SettingsError("not a PKCS#8 private key (its ASN.1 does not parse)")) }
          info.flatMap(privateKey(_, der))
        }
    }

  private def privateKey(info: PrivateKeyInfo, der: Array[Byte]): Either[SettingsError, SigningKey] = {
    val oid = info.getPrivateKeyAlgorithm.getAlgorithm
    val spec = new PKCS8EncodedKeySpec(der)
    guarded(s"${typeName(info.getPrivateKeyAlgorithm.getAlgorithm, info.getPrivateKeyAlgorithm.getParameters)} private key does not parse") {
      if (oid == RsaOid)
        KeyFactory.getInstance("RSA").generatePrivate(spec) match {
          case k: RSAPrivateCrtKey =>
            checkRsaBits(k.getModulus.bitLength).map { _ =>
              val pub = KeyFactory.getInstance("RSA")
                .generatePublic(new RSAPublicKeySpec(k.getModulus, k.getPublicExponent)).asInstanceOf[RSAPublicKey]
              SigningKey(k, jwk(pub), KeyAlgorithm.RS256)
            }
          case _ => refuse("RSA key without CRT parameters is not supported")
        }
      else if (oid == EcOid)
        ecCurve(info.getPrivateKeyAlgorithm.getParameters).map { curve =>
          val k = KeyFactory.getInstance("EC").generatePrivate(spec).asInstanceOf[ECPrivateKey]
          // The public point is d·G; PKCS#8 may leave it out, so it is computed (BouncyCastle's curve arithmetic).
          val w = ECNamedCurveTable.getByOID(curve).getG.multiply(k.getS).normalize()
          val point = new ECPoint(w.getAffineXCoord.toBigInteger, w.getAffineYCoord.toBigInteger)
          val pub = KeyFactory.getInstance("EC").generatePublic(new ECPublicKeySpec(point, k.getParams)).asInstanceOf[ECPublicKey]
          SigningKey(k, jwk(pub), KeyAlgorithm.ES256)
        }
      else if (oid == Ed25519Oid) {
        val seed = ASN1OctetString.getInstance(info.parsePrivateKey()).getOctets
        if (seed.length != Ed25519PrivateKeyParameters.KEY_SIZE) refuse("Ed25519 private key is not 32 bytes")
        else {
          val k = KeyFactory.getInstance("Ed25519").generatePrivate(spec)
          val x = new Ed25519PrivateKeyParameters(seed).generatePublicKey().getEncoded
          Right(SigningKey(k, okpJwk(x), KeyAlgorithm.EdDSA))
        }
      } else refuse(s"${typeName(oid, info.getPrivateKeyAlgorithm.getParameters)} key refused; accepted: RSA (at least $MinRsaBits bits), EC P-256, Ed25519")
    }
  }

  /**
   * Every `BEGIN PUBLIC KEY` block of a PEM bundle, in file order, as a JWK. Text outside the blocks is
   * ignored; a block of another kind (a private key, a certificate) or of a type not accepted is refused.
   */
  def parsePublicKeys(pem: String): Either[SettingsError, List[JWK]] = {
    val blocks = Pem.findAllMatchIn(pem).toList.zipWithIndex
    blocks.foldLeft[Either[SettingsError, List[JWK]]](Right(Nil)) { case (acc, (block, i)) =>
      acc.flatMap { keys =>
        val label = block.group(1)
        if (label != "PUBLIC KEY") refuse(s"block ${i + 1} is a $label, not a PUBLIC KEY")
        else parsePublicKey(block.group(2)).map(keys :+ _).left.map(e => SettingsError(s"block ${i + 1}: ${e.message}"))
      }
    }
  }

  private def parsePublicKey(base64: String): Either[SettingsError, JWK] =
    decodeBase64(base64).flatMap { der =>
      val parsed =
        try Right(SubjectPublicKeyInfo.getInstance(der))
        catch { case NonFatal(_) => Left(SettingsError("not an SPKI public key (its ASN.1 does not parse)")) }
      parsed.flatMap { info =>
        val oid = info.getAlgorithm.getAlgorithm
        val spec = new X509EncodedKeySpec(der)
        guarded(s"${typeName(oid, info.getAlgorithm.getParameters)} public key does not parse") {
          if (oid == RsaOid) {
            val pub = KeyFactory.getInstance("RSA").generatePublic(spec).asInstanceOf[RSAPublicKey]
            checkRsaBits(pub.getModulus.bitLength).map(_ => jwk(pub))
          } else if (oid == EcOid)
            ecCurve(info.getAlgorithm.getParameters).map(_ =>
              jwk(KeyFactory.getInstance("EC").generatePublic(spec).asInstanceOf[ECPublicKey]))
          else if (oid == Ed25519Oid) {
            val x = info.getPublicKeyData.getOctets
            if (x.length != 32) refuse("Ed25519 public key is not 32 bytes") else Right(okpJwk(x))
          } else refuse(s"${typeName(oid, info.getAlgorithm.getParameters)} public key refused; accepted: RSA (at least $MinRsaBits bits), EC P-256, Ed25519")
        }
      }
    }

  /** The JWK of a public key of an accepted type: `kty`, `use` sig, `alg`, `kid` (RFC 7638) and its key members. */
  def jwk(key: PublicKey): JWK = key match {
    case rsa: RSAPublicKey =>
      new RSAKey.Builder(rsa).keyUse(KeyUse.SIGNATURE).algorithm(JWSAlgorithm.RS256).keyIDFromThumbprint().build()
    case ec: ECPublicKey =>
      // Nimbus writes x and y as the full 32-byte coordinates, as RFC 7518 §6.2.1.2 and the thumbprint need.
      new ECKey.Builder(Curve.P_256, ec).keyUse(KeyUse.SIGNATURE).algorithm(JWSAlgorithm.ES256).keyIDFromThumbprint().build()
    case other => throw new IllegalArgumentException(s"not an RSA or EC public key: ${other.getAlgorithm}")
  }

  private def okpJwk(x: Array[Byte]): JWK =
    new OctetKeyPair.Builder(Curve.Ed25519, Base64URL.encode(x))
      .keyUse(KeyUse.SIGNATURE).algorithm(JWSAlgorithm.EdDSA).keyIDFromThumbprint().build()

  private def ecCurve(parameters: org.bouncycastle.asn1.ASN1Encodable): Either[SettingsError, ASN1ObjectIdentifier] =
    parameters match {
      case P256Oid                     => Right(P256Oid)
      case other: ASN1ObjectIdentifier => refuse(s"EC key on ${curveName(other)} refused; the only accepted curve is P-256")
      case _                           => refuse("EC key with explicit curve parameters refused; the only accepted curve is P-256 (named)")
    }

  private def checkRsaBits(bits: Int): Either[SettingsError, Unit] =
    Either.cond(bits >= MinRsaBits, (), SettingsError(s"RSA key has $bits bits; at least $MinRsaBits are required"))

  private def typeName(oid: ASN1ObjectIdentifier, parameters: org.bouncycastle.asn1.ASN1Encodable): String =
    if (oid == RsaOid) "RSA"
    else if (oid == EcOid) parameters match {
      case curve: ASN1ObjectIdentifier => s"EC ${curveName(curve)}"
      case _                           => "EC"
    }
    else if (oid == Ed25519Oid) "Ed25519"
    else if (oid == Ed448Oid) "Ed448"
    else if (oid == X9ObjectIdentifiers.id_dsa) "DSA"
    else if (oid == PKCSObjectIdentifiers.id_RSASSA_PSS) "RSASSA-PSS"
    else s"algorithm ${oid.getId}"

  private def curveName(oid: ASN1ObjectIdentifier): String =
    Option(ECNamedCurveTable.getName(oid)).getOrElse(oid.getId)

  private def decodeBase64(body: String): Either[SettingsError, Array[Byte]] =
    try Right(Base64.getDecoder.decode(body.filterNot(_.isWhitespace)))
    catch { case _: IllegalArgumentException => refuse("PEM body is not valid Base64") }

  /** Runs a parse step; an exception from the JCA or ASN.1 code becomes `refusal` (never the key's bytes). */
  private def guarded[T](refusal: => String)(body: => Either[SettingsError, T]): Either[SettingsError, T] =
    try body
    catch { case NonFatal(_) => refuse(refusal) }

  private def refuse(message: String): Left[SettingsError, Nothing] = Left(SettingsError(message))
}
