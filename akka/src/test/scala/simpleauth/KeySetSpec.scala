package simpleauth

import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import simpleauth.JsonFormats.given
import spray.json.*

class KeySetSpec extends AnyWordSpec with Matchers {
  "Jwk" should {
    "render the dev bundle's keys as the vectors' JWKs" in {
      val keys = Keys.parsePublicKeys(Vectors.pem("keys/dev-public-keys.pem")).fold(e => fail(e.message), identity)
      keys.map(k => Jwk.from(k).toJson) shouldBe Vectors.keys.map(_.jwk).toList
    }
  }

  "KeySet.from" should {
    "publish the signing key first, then the bundle in file order, each kid once: the vectors' bundle JWKS" in {
      val (bundle, signing, expected) = Vectors.publicKeyBundle
      val published = Keys.parsePublicKeys(Vectors.pem(bundle)).fold(e => fail(e.message), identity)
      val keySet = TestKeys.keySet(TestKeys.metrics(), Vectors.signingKey(signing), published)
      keySet.jwks.toJson shouldBe expected
      keySet.jwks.keys.size shouldBe 4
    }

    "put the signing key first when the bundle lists it later" in {
      val published = Keys.parsePublicKeys(Vectors.pem("keys/dev-public-keys.pem")).fold(e => fail(e.message), identity)
      val keySet = TestKeys.keySet(TestKeys.metrics(), Vectors.signingKey("keys/dev-ed25519.pem"), published)
      keySet.jwks.keys.map(_.kid) shouldBe
        List("ed25519", "rsa-2048", "rsa-4096", "p-256").map(t => Vectors.key(t).kid)
      keySet.discovery.id_token_signing_alg_values_supported shouldBe List("EdDSA")
    }
  }
}
