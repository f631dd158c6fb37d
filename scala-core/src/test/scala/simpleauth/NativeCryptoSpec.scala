package simpleauth

import com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider
import java.nio.charset.StandardCharsets
import java.security.{PrivateKey, Signature}
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class NativeCryptoSpec extends AnyWordSpec with Matchers {
  private val signingInput = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2huIn0".getBytes(StandardCharsets.US_ASCII)
  /** The platforms build.sbt bundles ACCP's native library for. */
  private def accpPlatform = sys.props("os.name") == "Linux" && Set("amd64", "x86_64", "aarch64", "arm64").contains(sys.props("os.arch"))

  private def sign(key: PrivateKey, signature: Signature): Array[Byte] = {
    signature.initSign(key)
    signature.update(signingInput)
    signature.sign()
  }

  private def parse(pem: String): SigningKey = Keys.parsePrivateKey(pem).fold(e => fail(e.message), identity)

  "NativeCrypto" should {
    "sign with AWS-LC on Linux x86-64 and aarch64 and give the JDK's bytes" in {
      assume(accpPlatform, "ACCP's native library is bundled for Linux x86-64 and aarch64")
      val pem = Vectors.pem("keys/dev-rsa-2048.pem")
      val jdk = sign(parse(pem).privateKey, Signature.getInstance("SHA256withRSA", "SunRsaSign"))

      NativeCrypto.install() shouldBe None
      NativeCrypto.signatureProvider("SHA256withRSA", parse(pem).privateKey) should startWith(AmazonCorrettoCryptoProvider.PROVIDER_NAME)
      val signature = Signature.getInstance("SHA256withRSA")
      signature.getProvider.getName shouldBe AmazonCorrettoCryptoProvider.PROVIDER_NAME
      // RSASSA-PKCS1-v1_5 is deterministic: same key, same input, same bytes.
      sign(parse(pem).privateKey, signature) shouldBe jdk
    }

    "sign ES256 and EdDSA with ACCP too, checked on the service's own signers" in {
      assume(accpPlatform, "ACCP's native library is bundled for Linux x86-64 and aarch64")
      NativeCrypto.install() shouldBe None
      for (file <- List("keys/dev-rsa-2048.pem", "keys/dev-p256.pem", "keys/dev-ed25519.pem")) withClue(file) {
        val key = Vectors.signingKey(file)
        NativeCrypto.signatureProvider(key.algorithm.jcaSignature, key.privateKey) should startWith(AmazonCorrettoCryptoProvider.PROVIDER_NAME)
        val signer = new TokenSigner(key, "i", "a", 60)
        signer.provider should startWith(AmazonCorrettoCryptoProvider.PROVIDER_NAME)
      }
      // Ed25519 is deterministic: ACCP's signature equals the JDK's (SunEC) for the same key and input.
      val ed = Vectors.signingKey("keys/dev-ed25519.pem")
      sign(ed.privateKey, Signature.getInstance("Ed25519")) shouldBe sign(ed.privateKey, Signature.getInstance("Ed25519", "SunEC"))
    }
  }
}
