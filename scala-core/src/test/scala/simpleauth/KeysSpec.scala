package simpleauth

import java.nio.file.Files
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import spray.json.*

class KeysSpec extends AnyWordSpec with Matchers {
  private def refusal(relative: String): String =
    Keys.parsePrivateKey(Vectors.pem(relative)).left.map(_.message).swap.getOrElse(fail(s"$relative accepted"))

  "Keys.parsePrivateKey" should {
    "take RSA >= 2048, EC P-256 and Ed25519 PKCS#8 keys, each with its algorithm" in {
      Vectors.signingKey("keys/dev-rsa-2048.pem").algorithm shouldBe KeyAlgorithm.RS256
      Vectors.signingKey("keys/dev-rsa-4096.pem").algorithm shouldBe KeyAlgorithm.RS256
      Vectors.signingKey("keys/dev-p256.pem").algorithm shouldBe KeyAlgorithm.ES256
      Vectors.signingKey("keys/dev-ed25519.pem").algorithm shouldBe KeyAlgorithm.EdDSA
    }

    "refuse every invalid key with one line naming the problem" in {
      refusal("keys/invalid/rsa-2048-pkcs1.pem") should include("PKCS#1")
      refusal("keys/invalid/rsa-1024-pkcs8.pem") should include("1024 bits")
      refusal("keys/invalid/ec-p256-sec1.pem") should include("SEC 1")
      refusal("keys/invalid/ec-p384-pkcs8.pem") should include("secp384r1")
      refusal("keys/invalid/ec-secp256k1-pkcs8.pem") should include("secp256k1")
      refusal("keys/invalid/ed448-pkcs8.pem") should include("Ed448")
      refusal("keys/invalid/public-ec-p384.pem") should include("BEGIN PRIVATE KEY")
      for (f <- Files.list(Vectors.specDir.resolve("keys/invalid")).toArray.map(_.toString))
        withClue(f)(Keys.parsePrivateKey(new String(Files.readAllBytes(java.nio.file.Paths.get(f)))).isLeft shouldBe true)
      for (m <- List(refusal("keys/invalid/ec-p384-pkcs8.pem"), refusal("keys/invalid/ed448-pkcs8.pem")))
        m should not include "\n"
    }

    "refuse text that is not a key" in {
      Keys.parsePrivateKey("hello").isLeft shouldBe true
      Keys.parsePrivateKey("-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----").isLeft shouldBe true
      Keys.parsePrivateKey("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----").isLeft shouldBe true
    }
  }

  "Keys.parsePublicKeys" should {
    "read the dev bundle: four keys in file order, JWKs as in the vectors" in {
      val keys = Keys.parsePublicKeys(Vectors.pem("keys/dev-public-keys.pem")).fold(e => fail(e.message), identity)
      keys.map(_.getKeyID) shouldBe Vectors.keys.map(_.kid).toList
      keys.map(k => JsonParser(k.toJSONString)) shouldBe Vectors.keys.map(_.jwk).toList
    }

    "ignore text outside the blocks; a file with no block publishes nothing" in {
      Keys.parsePublicKeys("just a comment\n") shouldBe Right(Nil)
      val one = "# next key\n" + Vectors.pem("keys/dev-public-keys.pem").split("(?<=-----END PUBLIC KEY-----)").head + "\ntrailer\n"
      Keys.parsePublicKeys(one).map(_.map(_.getKeyID)) shouldBe Right(List(Vectors.key("rsa-2048").kid))
    }

    "refuse a block that is not a public key of an accepted type" in {
      Keys.parsePublicKeys(Vectors.pem("keys/invalid/public-ec-p384.pem")).left.map(_.message).swap.getOrElse(fail()) should
        include("secp384r1")
      Keys.parsePublicKeys(Vectors.pem("keys/dev-p256.pem")).left.map(_.message).swap.getOrElse(fail()) should
        include("PRIVATE KEY")
      Keys.parsePublicKeys(Vectors.pem("keys/dev-public-keys.pem") + Vectors.pem("keys/invalid/public-ec-p384.pem"))
        .left.map(_.message).swap.getOrElse(fail()) should startWith("block 5")
    }
  }
}
