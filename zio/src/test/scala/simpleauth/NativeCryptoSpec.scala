package simpleauth

import java.nio.charset.StandardCharsets
import java.security.{PrivateKey, Signature}

import com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider
import zio.*
import zio.test.*
import zio.test.TestAspect.*

object NativeCryptoSpec extends ZIOSpecDefault:
  private val signingInput = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2huIn0".getBytes(StandardCharsets.US_ASCII)

  private def sign(key: PrivateKey, signature: Signature): Array[Byte] =
    signature.initSign(key)
    signature.update(signingInput)
    signature.sign()

  private def privateKey: PrivateKey = Vectors.devKey.privateKey

  def spec = suite("NativeCrypto")(
    test("signs with AWS-LC on Linux x86-64 and aarch64 and gives the JDK's bytes") {
      val jdk = sign(privateKey, Signature.getInstance("SHA256withRSA", "SunRsaSign"))
      for unavailable <- NativeCrypto.install
      yield
        val signature = Signature.getInstance("SHA256withRSA")
        assertTrue(
          unavailable.isEmpty,
          NativeCrypto.providerOf("SHA256withRSA").startsWith(AmazonCorrettoCryptoProvider.PROVIDER_NAME),
          signature.getProvider.getName == AmazonCorrettoCryptoProvider.PROVIDER_NAME,
          // RSASSA-PKCS1-v1_5 is deterministic: same key, same input, same bytes.
          sign(privateKey, signature).sameElements(jdk)
        )
    } @@ TestAspect.ifProp("os.name")(_ == "Linux") @@ TestAspect.ifProp("os.arch")(a => Set("amd64", "x86_64", "aarch64", "arm64").contains(a)),
    test("ACCP signs every key type: RS256, ES256 (P1363 R||S) and Ed25519, and its signatures verify with the JDK's") {
      for unavailable <- NativeCrypto.install
      yield
        val results = Vectors.keys.map { k =>
          val key = Vectors.signingKey(k.keyType) // parsed after ACCP is installed, as in the service
          val s   = Signature.getInstance(key.keyType.jcaSignature)
          s.initSign(key.privateKey); s.update(signingInput)
          val signature = s.sign()
          val (jdkName, jdkProvider) = k.alg match
            case "RS256" => ("SHA256withRSA", "SunRsaSign")
            case "ES256" => ("SHA256withECDSAinP1363Format", "SunEC")
            case _       => ("Ed25519", "SunEC")
          val v = Signature.getInstance(jdkName, jdkProvider)
          v.initVerify(key.publicKey); v.update(signingInput)
          val deterministicSame = k.alg == "ES256" || {
            val j = Signature.getInstance(jdkName, jdkProvider); j.initSign(key.privateKey); j.update(signingInput); j.sign().sameElements(signature)
          }
          (k.keyType, key.provider, s.getProvider.getName, NativeCrypto.providerOf(key.keyType.jcaSignature), v.verify(signature),
            deterministicSame, k.alg != "ES256" || signature.length == 64)
        }
        assertTrue(
          unavailable.isEmpty,
          results.forall(_._2.startsWith(AmazonCorrettoCryptoProvider.PROVIDER_NAME)),
          results.forall(_._3 == AmazonCorrettoCryptoProvider.PROVIDER_NAME),
          results.forall(_._4.startsWith(AmazonCorrettoCryptoProvider.PROVIDER_NAME)),
          results.forall(r => r._5 && r._6 && r._7)
        )
    } @@ TestAspect.ifProp("os.name")(_ == "Linux") @@ TestAspect.ifProp("os.arch")(a => Set("amd64", "x86_64", "aarch64", "arm64").contains(a))
  ) @@ TestAspect.sequential
