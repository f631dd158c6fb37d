package simpleauth

import java.nio.charset.StandardCharsets.US_ASCII
import java.security.{KeyFactory, MessageDigest, PrivateKey, PublicKey, Signature}
import java.security.interfaces.{ECPrivateKey, ECPublicKey, RSAPrivateCrtKey, RSAPublicKey}
import java.security.spec.{ECPoint, ECPublicKeySpec, PKCS8EncodedKeySpec, RSAPublicKeySpec, X509EncodedKeySpec}
import java.util.Base64

import scala.util.control.NonFatal

import com.nimbusds.jose.{JOSEException, JOSEObjectType, JWSAlgorithm, JWSHeader, JWSSigner}
import com.nimbusds.jose.jca.JCAContext
import com.nimbusds.jose.jwk.{Curve, ECKey, OctetKeyPair, RSAKey}
import com.nimbusds.jose.util.Base64URL
import org.bouncycastle.asn1.{ASN1ObjectIdentifier, ASN1OctetString}
import org.bouncycastle.asn1.nist.NISTNamedCurves
import org.bouncycastle.asn1.pkcs.{PKCSObjectIdentifiers, PrivateKeyInfo}
import org.bouncycastle.asn1.x509.{AlgorithmIdentifier, SubjectPublicKeyInfo}
import org.bouncycastle.asn1.x9.{ECNamedCurveTable, X9ObjectIdentifiers}
import org.bouncycastle.crypto.params.Ed25519PrivateKeyParameters
import zio.Chunk
import zio.json.ast.Json

/**
 * The three key types of the contract (§2): the key decides the algorithm. `jcaSignature` is the JCA algorithm that
 * signs it — the first provider offering it signs, Amazon Corretto Crypto Provider (AWS-LC) once `NativeCrypto`
 * installed it (ACCP 2.5.0 offers all three; `NativeCryptoSpec` checks it). ES256 asks for the P1363 form, the 64-byte
 * `R‖S` JOSE wants (RFC 7518 §3.4), so nothing is transcoded from DER. `atHashDigest` is OIDC Core §3.1.3.6's hash.
 */
enum KeyType(val alg: JWSAlgorithm, val jcaSignature: String, val atHashDigest: String):
  case Rsa     extends KeyType(JWSAlgorithm.RS256, "SHA256withRSA", "SHA-256")
  case P256    extends KeyType(JWSAlgorithm.ES256, "SHA256withECDSAinP1363Format", "SHA-256")
  case Ed25519 extends KeyType(JWSAlgorithm.parse("EdDSA"), "Ed25519", "SHA-512")

  def algName: String = alg.getName

/** A published verification key: its `kid` (RFC 7638) and its JWK as §3 writes it (member order as spec/vectors.json). */
final case class PublicJwk(kid: String, alg: String, json: Json.Obj)

/**
 * The signing key: its type, its public JWK, the provider that signs with it (found by signing once at load) and the
 * two token headers (§2: `typ` `at+jwt` on the access token, `JWT` on the ID token).
 */
final case class SigningKey(keyType: KeyType, privateKey: PrivateKey, publicKey: PublicKey, jwk: PublicJwk, provider: String):
  def kid: String = jwk.kid
  def alg: String = keyType.algName

  val signer: JWSSigner = JcaJwsSigner(keyType.alg, keyType.jcaSignature, privateKey)
  val accessTokenHeader: JWSHeader = new JWSHeader.Builder(keyType.alg).`type`(SigningKey.AccessTokenType).keyID(kid).build()
  val idTokenHeader: JWSHeader     = new JWSHeader.Builder(keyType.alg).`type`(JOSEObjectType.JWT).keyID(kid).build()

  /** OIDC Core §3.1.3.6: base64url of the left half of the algorithm's hash of the access token's ASCII octets. */
  def atHash(accessToken: String): String = SigningKeys.atHash(keyType, accessToken)

object SigningKey:
  /** RFC 9068 §2.1. */
  val AccessTokenType = new JOSEObjectType("at+jwt")

/**
 * A Nimbus `JWSSigner` on a plain JCA `Signature`, for all three algorithms. Nimbus' own `Ed25519Signer` needs
 * Google Tink (its own Ed25519, not JCA), so EdDSA would bypass ACCP; Nimbus' `ECDSASigner` asks the JCA for DER and
 * transcodes to `R‖S`. One `Signature` per thread, initialised once: after `sign()` a JCA signature is ready for the
 * next input with the same key, so no provider lookup or key translation happens per token.
 */
final class JcaJwsSigner(alg: JWSAlgorithm, jcaName: String, key: PrivateKey) extends JWSSigner:
  private val context = new JCAContext()
  private val perThread: ThreadLocal[Signature] = ThreadLocal.withInitial { () =>
    val s = Signature.getInstance(jcaName)
    s.initSign(key)
    s
  }

  def supportedJWSAlgorithms(): java.util.Set[JWSAlgorithm] = java.util.Set.of(alg)
  def getJCAContext: JCAContext                              = context

  def sign(header: JWSHeader, signingInput: Array[Byte]): Base64URL =
    if header.getAlgorithm != alg then throw new JOSEException(s"this signer signs ${alg.getName}, not ${header.getAlgorithm}")
    val s = perThread.get()
    s.update(signingInput)
    Base64URL.encode(s.sign())

/**
 * Reading keys with the contract's refusals (§2, §5): the signing key (a PKCS#8 PEM) and the `JWT_PUBLIC_KEYS_FILE`
 * bundle (SPKI blocks). The key type is read from the DER's algorithm identifier (BouncyCastle's ASN.1 classes, only
 * to parse); keys are made by the JCA's `KeyFactory` (ACCP's for RSA and EC, so they stay native keys). Messages name
 * the problem, never a key's bytes.
 */
object SigningKeys:
  val MinRsaBits = 2048

  /** RFC 8410's algorithm identifiers (BouncyCastle keeps its own constants in an internal package). */
  private object Oid:
    val Ed25519 = new ASN1ObjectIdentifier("1.3.101.112")
    val Ed448   = new ASN1ObjectIdentifier("1.3.101.113")
    val X25519  = new ASN1ObjectIdentifier("1.3.101.110")
    val X448    = new ASN1ObjectIdentifier("1.3.101.111")

  /** The private key's own name in the start-up refusals and reload errors. */
  private val What = "JWT private key"

  private val Block = """(?s)-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----""".r

  private def b64(body: String): Option[Array[Byte]] =
    try Some(Base64.getDecoder.decode(body.replaceAll("\\s", "")))
    catch case _: IllegalArgumentException => None

  def atHash(keyType: KeyType, accessToken: String): String =
    val digest = MessageDigest.getInstance(keyType.atHashDigest).digest(accessToken.getBytes(US_ASCII))
    Base64.getUrlEncoder.withoutPadding.encodeToString(java.util.Arrays.copyOf(digest, digest.length / 2))

  // ---------------------------------------------------------------- the signing key

  def loadSigningKey(pem: String): Either[String, SigningKey] =
    val labels = Block.findAllMatchIn(pem).map(_.group(1)).toList
    if labels.contains("RSA PRIVATE KEY") then
      Left(s"$What is PKCS#1 (BEGIN RSA PRIVATE KEY); convert it to PKCS#8: openssl pkcs8 -topk8 -nocrypt")
    else if labels.contains("EC PRIVATE KEY") then
      Left(s"$What is SEC 1 (BEGIN EC PRIVATE KEY); convert it to PKCS#8: openssl pkcs8 -topk8 -nocrypt")
    else if labels.contains("ENCRYPTED PRIVATE KEY") then
      Left(s"$What is encrypted; an unencrypted PKCS#8 PEM (BEGIN PRIVATE KEY) is required")
    else
      Block.findAllMatchIn(pem).find(_.group(1) == "PRIVATE KEY") match
        case None => Left(s"$What is not a PKCS#8 PEM (expected -----BEGIN PRIVATE KEY-----)")
        case Some(m) =>
          b64(m.group(2)) match
            case None => Left(s"$What PEM has invalid base64")
            case Some(der) =>
              try fromPkcs8(der).flatMap(probe)
              catch case NonFatal(e) => Left(s"$What is not a valid PKCS#8 key (${e.getClass.getSimpleName})")

  private def fromPkcs8(der: Array[Byte]): Either[String, SigningKey] =
    val info = PrivateKeyInfo.getInstance(der)
    val algo = info.getPrivateKeyAlgorithm
    algo.getAlgorithm match
      case PKCSObjectIdentifiers.rsaEncryption =>
        KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(der)) match
          case k: RSAPrivateCrtKey =>
            val bits = k.getModulus.bitLength
            if bits < MinRsaBits then Left(s"$What is RSA $bits bits; at least $MinRsaBits are required")
            else
              val pub = KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(k.getModulus, k.getPublicExponent))
              publicJwk(pub).map(jwk => SigningKey(KeyType.Rsa, k, pub, jwk, ""))
          case _ => Left(s"$What is not an RSA key with CRT parameters")
      case X9ObjectIdentifiers.id_ecPublicKey =>
        p256(algo, What).flatMap { _ =>
          KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der)) match
            case k: ECPrivateKey =>
              // The public point d·G (a PKCS#8 EC key need not carry it), by BouncyCastle's curve arithmetic.
              val q   = ECNamedCurveTable.getByOID(X9ObjectIdentifiers.prime256v1).getG.multiply(k.getS).normalize()
              val w   = new ECPoint(q.getAffineXCoord.toBigInteger, q.getAffineYCoord.toBigInteger)
              val pub = KeyFactory.getInstance("EC").generatePublic(new ECPublicKeySpec(w, k.getParams))
              publicJwk(pub).map(jwk => SigningKey(KeyType.P256, k, pub, jwk, ""))
            case _ => Left(s"$What is not an EC private key")
        }
      case Oid.Ed25519 =>
        val seed = ASN1OctetString.getInstance(info.parsePrivateKey()).getOctets
        if seed.length != 32 then Left(s"$What is not a valid Ed25519 key")
        else
          val k   = KeyFactory.getInstance("Ed25519").generatePrivate(new PKCS8EncodedKeySpec(der))
          val raw = new Ed25519PrivateKeyParameters(seed, 0).generatePublicKey().getEncoded
          val spki = new SubjectPublicKeyInfo(new AlgorithmIdentifier(Oid.Ed25519), raw).getEncoded
          val pub = KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(spki))
          publicJwk(pub).map(jwk => SigningKey(KeyType.Ed25519, k, pub, jwk, ""))
      case other => Left(s"$What is ${typeName(other)}; $Accepted")

  /** Signs once and verifies with the public key: the pair belongs together, and this names the provider that signs. */
  private def probe(key: SigningKey): Either[String, SigningKey] =
    val input = "simple-auth key check".getBytes(US_ASCII)
    val s     = Signature.getInstance(key.keyType.jcaSignature)
    s.initSign(key.privateKey)
    s.update(input)
    val signature = s.sign()
    val v         = Signature.getInstance(key.keyType.jcaSignature)
    v.initVerify(key.publicKey)
    v.update(input)
    if !v.verify(signature) then Left(s"$What: its public key does not verify its signature")
    else Right(key.copy(provider = s"${s.getProvider.getName} ${s.getProvider.getVersionStr}"))

  // ---------------------------------------------------------------- the public-key bundle

  /**
   * `JWT_PUBLIC_KEYS_FILE`: every PEM block must be a `PUBLIC KEY` (SPKI) of an accepted type; text outside the
   * blocks is ignored, and a file without any block publishes nothing.
   */
  def loadPublicKeys(pem: String): Either[String, List[PublicJwk]] =
    val blocks = Block.findAllMatchIn(pem).map(m => (m.group(1), m.group(2))).toList
    blocks.zipWithIndex.foldLeft[Either[String, List[PublicJwk]]](Right(Nil)) { case (acc, ((label, body), i)) =>
      acc.flatMap { keys =>
        val where = s"JWT_PUBLIC_KEYS_FILE block ${i + 1}"
        if label != "PUBLIC KEY" then Left(s"$where is $label, not a PUBLIC KEY (SPKI)")
        else
          b64(body) match
            case None => Left(s"$where has invalid base64")
            case Some(der) =>
              val jwk =
                try fromSpki(der, where)
                catch case NonFatal(e) => Left(s"$where is not a valid public key (${e.getClass.getSimpleName})")
              jwk.map(keys :+ _)
      }
    }

  private def fromSpki(der: Array[Byte], where: String): Either[String, PublicJwk] =
    val info = SubjectPublicKeyInfo.getInstance(der)
    info.getAlgorithm.getAlgorithm match
      case PKCSObjectIdentifiers.rsaEncryption =>
        KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(der)) match
          case k: RSAPublicKey if k.getModulus.bitLength < MinRsaBits =>
            Left(s"$where is RSA ${k.getModulus.bitLength} bits; at least $MinRsaBits are required")
          case k => publicJwk(k)
      case X9ObjectIdentifiers.id_ecPublicKey =>
        p256(info.getAlgorithm, where).flatMap(_ => publicJwk(KeyFactory.getInstance("EC").generatePublic(new X509EncodedKeySpec(der))))
      case Oid.Ed25519 =>
        publicJwk(KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(der)))
      case other => Left(s"$where is ${typeName(other)}; $Accepted")

  // ---------------------------------------------------------------- JWKs

  /** The §3 JWK of a public key, `kid` = Nimbus' RFC 7638 thumbprint (SHA-256). */
  def publicJwk(key: PublicKey): Either[String, PublicJwk] =
    def base(kid: String, kind: String, alg: String) =
      Chunk("kty" -> Json.Str(kind), "use" -> Json.Str("sig"), "alg" -> Json.Str(alg), "kid" -> Json.Str(kid))
    key match
      case k: RSAPublicKey =>
        val jwk = new RSAKey.Builder(k).keyIDFromThumbprint().build()
        val kid = jwk.getKeyID
        Right(PublicJwk(kid, "RS256", Json.Obj(base(kid, "RSA", "RS256") ++
          Chunk("e" -> Json.Str(jwk.getPublicExponent.toString), "n" -> Json.Str(jwk.getModulus.toString)))))
      case k: ECPublicKey =>
        val jwk = new ECKey.Builder(Curve.P_256, k).keyIDFromThumbprint().build()
        val kid = jwk.getKeyID
        Right(PublicJwk(kid, "ES256", Json.Obj(base(kid, "EC", "ES256") ++
          Chunk("crv" -> Json.Str("P-256"), "x" -> Json.Str(jwk.getX.toString), "y" -> Json.Str(jwk.getY.toString)))))
      case k if k.getAlgorithm == "EdDSA" || k.getAlgorithm == "Ed25519" =>
        // The SPKI of an Ed25519 key is a 12-byte prefix and the 32-byte key (RFC 8410).
        val raw = SubjectPublicKeyInfo.getInstance(k.getEncoded).getPublicKeyData.getOctets
        val jwk = new OctetKeyPair.Builder(Curve.Ed25519, Base64URL.encode(raw)).keyIDFromThumbprint().build()
        val kid = jwk.getKeyID
        Right(PublicJwk(kid, "EdDSA", Json.Obj(base(kid, "OKP", "EdDSA") ++
          Chunk("crv" -> Json.Str("Ed25519"), "x" -> Json.Str(jwk.getX.toString)))))
      case other => Left(s"a ${other.getAlgorithm} public key is not accepted; $Accepted")

  // ---------------------------------------------------------------- names

  private val Accepted = "accepted: RSA >= 2048 bits (RS256), EC P-256 (ES256), Ed25519 (EdDSA)"

  private def p256(algo: AlgorithmIdentifier, what: String): Either[String, Unit] =
    algo.getParameters match
      case X9ObjectIdentifiers.prime256v1 => Right(())
      case curve: ASN1ObjectIdentifier    => Left(s"$what is EC on curve ${curveName(curve)}; only P-256 is accepted")
      case _                              => Left(s"$what is EC with explicit curve parameters; only the named curve P-256 is accepted")

  private def curveName(oid: ASN1ObjectIdentifier): String =
    Option(NISTNamedCurves.getName(oid)).orElse(Option(ECNamedCurveTable.getName(oid))).getOrElse(oid.getId)

  private def typeName(oid: ASN1ObjectIdentifier): String = oid match
    case Oid.Ed448  => "Ed448 (only Ed25519 is accepted)"
    case Oid.X25519 => "an X25519 key-agreement key"
    case Oid.X448   => "an X448 key-agreement key"
    case PKCSObjectIdentifiers.id_RSASSA_PSS => "an RSA-PSS key"
    case X9ObjectIdentifiers.id_dsa      => "a DSA key"
    case other                           => s"a key of type ${other.getId}"
