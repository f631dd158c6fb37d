package simpleauth

import akka.http.scaladsl.model.ContentTypes
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import simpleauth.JsonFormats.given

class JsonFormatsSpec extends AnyWordSpec with Matchers {
  private def bytes[T: spray.json.RootJsonWriter](value: T): String = {
    val entity = JsonFormats.entity(value)
    entity.contentType shouldBe ContentTypes.`application/json`
    entity.data.utf8String
  }

  "The response bodies" should {
    "print the token response in the contract's member order" in {
      bytes(TokenResponse.from(TokenPair("a.b.c", "d.e.f", 600))) shouldBe
        """{"access_token":"a.b.c","id_token":"d.e.f","token_type":"Bearer","expires_in":600}"""
    }

    "print an error with and without its description" in {
      bytes(ErrorBody.from(ApiError.invalidGrant)) shouldBe
        """{"error":"invalid_grant","error_description":"invalid username or password"}"""
      bytes(ErrorBody.from(ApiError.notFound)) shouldBe """{"error":"not_found"}"""
    }

    "print the health status" in {
      bytes(HealthStatus("up")) shouldBe """{"status":"up"}"""
    }

    "print the JWK set of every dev key in the contract's member order" in {
      for (k <- Vectors.keys) {
        val key = Settings.parsePkcs8RsaKey(Vectors.pem(k.file)).fold(e => fail(e.message), identity)
        val jwks = new TokenSigner(key, "i", "a", 1, Vectors.metrics()).jwks()
        bytes(JwkSet.from(jwks)) shouldBe
          s"""{"keys":[{"kty":"RSA","use":"sig","alg":"RS256","kid":"${k.kid}","n":"${k.n}","e":"${k.e}"}]}"""
        // Why the set is not served as Nimbus prints it: the same members in another order (Nimbus keeps them in
        // a HashMap). Should this fail, Nimbus prints the contract's bytes and JwkSet can go.
        spray.json.JsonParser(jwks.toString) shouldBe spray.json.JsonParser(bytes(JwkSet.from(jwks)))
        jwks.toString should not be bytes(JwkSet.from(jwks))
      }
    }
  }
}
