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
      bytes(TokenResponse.from(IssuedTokens(TokenPair("a.b.c", "d.e.f", 600), "r" * 43))) shouldBe
        s"""{"access_token":"a.b.c","id_token":"d.e.f","token_type":"Bearer","expires_in":600,"refresh_token":"${"r" * 43}"}"""
    }

    "print an error with and without its description" in {
      bytes(ErrorBody.from(ApiError.invalidGrant)) shouldBe
        """{"error":"invalid_grant","error_description":"invalid username or password"}"""
      bytes(ErrorBody.from(ApiError.invalidRefreshToken)) shouldBe
        """{"error":"invalid_grant","error_description":"invalid refresh token"}"""
      bytes(ErrorBody.from(ApiError.notFound)) shouldBe """{"error":"not_found"}"""
    }

    "print the health status" in {
      bytes(HealthStatus("up")) shouldBe """{"status":"up"}"""
    }

    "print the JWK of every dev key in the contract's member order" in {
      def str(o: spray.json.JsObject, k: String) = o.fields(k).asInstanceOf[spray.json.JsString].value
      for (k <- Vectors.keys) withClue(k.file) {
        val key = Vectors.signingKey(k.file)
        val jwk = Jwk.from(key.publicJwk)
        val head = s""""kty":"${str(k.jwk, "kty")}","use":"sig","alg":"${k.alg}","kid":"${k.kid}""""
        val members = str(k.jwk, "kty") match {
          case "RSA" => s""""n":"${str(k.jwk, "n")}","e":"${str(k.jwk, "e")}""""
          case "EC"  => s""""crv":"P-256","x":"${str(k.jwk, "x")}","y":"${str(k.jwk, "y")}""""
          case _     => s""""crv":"Ed25519","x":"${str(k.jwk, "x")}""""
        }
        bytes(JwkSet(List(jwk))) shouldBe s"""{"keys":[{$head,$members}]}"""
        // Why the set is not served as Nimbus prints it: the same members in another order (Nimbus keeps them in
        // a HashMap). Should this fail, Nimbus prints the contract's bytes and JwkSet can go.
        val nimbus = new com.nimbusds.jose.jwk.JWKSet(key.publicJwk).toString
        spray.json.JsonParser(nimbus) shouldBe spray.json.JsonParser(bytes(JwkSet(List(jwk))))
        if (k.alg == "RS256") nimbus should not be bytes(JwkSet(List(jwk)))
      }
    }

    "print the discovery document in the contract's member order" in {
      bytes(OpenIdConfiguration.from("https://issuer.example/", KeyAlgorithm.EdDSA)) shouldBe
        """{"issuer":"https://issuer.example/","token_endpoint":"https://issuer.example/token",""" +
        """"jwks_uri":"https://issuer.example/.well-known/jwks.json","grant_types_supported":["password","refresh_token"],""" +
        """"revocation_endpoint":"https://issuer.example/revoke","revocation_endpoint_auth_methods_supported":["none"],""" +
        """"response_types_supported":[],"subject_types_supported":["public"],""" +
        """"id_token_signing_alg_values_supported":["EdDSA"],"token_endpoint_auth_methods_supported":["none"],""" +
        """"claims_supported":["iss","aud","sub","iat","exp","sid","jti","client_id","name","preferred_username","email","at_hash"]}"""
    }
  }
}
