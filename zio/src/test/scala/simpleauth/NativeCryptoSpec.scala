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

  private def privateKey: PrivateKey = RsaKeys.load(Vectors.devKeyPem).toOption.get.toRSAPrivateKey

  def spec = suite("NativeCrypto")(
    test("signs with AWS-LC on Linux x86-64 and aarch64 and gives the JDK's bytes") {
      val jdk = sign(privateKey, Signature.getInstance("SHA256withRSA", "SunRsaSign"))
      for unavailable <- NativeCrypto.install
      yield
        val signature = Signature.getInstance("SHA256withRSA")
        assertTrue(
          unavailable.isEmpty,
          NativeCrypto.rsaProvider.startsWith(AmazonCorrettoCryptoProvider.PROVIDER_NAME),
          signature.getProvider.getName == AmazonCorrettoCryptoProvider.PROVIDER_NAME,
          // RSASSA-PKCS1-v1_5 is deterministic: same key, same input, same bytes.
          sign(privateKey, signature).sameElements(jdk)
        )
    } @@ TestAspect.ifProp("os.name")(_ == "Linux") @@ TestAspect.ifProp("os.arch")(a => Set("amd64", "x86_64", "aarch64", "arm64").contains(a))
  )
