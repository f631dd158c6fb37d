package simpleauth

import com.nimbusds.jwt.SignedJWT
import java.time.Instant
import java.util.UUID
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import scala.jdk.CollectionConverters.*

import spray.json.*

class TokenSignerSpec extends AnyWordSpec with Matchers {
  private val user = User(UUID.fromString("2f6ac9d1-8f3c-4e59-9d0b-9b7e5a0f4c11"), "johndoe", "John Doe", "john@example.com", "x")
  private val now = Instant.ofEpochSecond(1_800_000_000L)
  private def signerOf(key: SigningKey) =
    new TokenSigner(key, "http://localhost:8080", "channel-api", 600, clock = () => now)
  private val signer = signerOf(Vectors.devKey)

  "TokenSigner" should {
    "take every dev key's algorithm, kid and JWK from its type, as in the vectors" in {
      Vectors.keys.map(_.alg).toSet shouldBe Set("RS256", "ES256", "EdDSA")
      for (k <- Vectors.keys) withClue(k.file) {
        val key = Vectors.signingKey(k.file)
        key.algorithm.name shouldBe k.alg
        key.algorithm.atHashDigest.replace("-", "").toLowerCase shouldBe k.atHashDigest
        val s = signerOf(key)
        s.kid shouldBe k.kid
        s.algorithm.name shouldBe k.alg
        key.publicJwk.isPrivate shouldBe false
        JsonParser(key.publicJwk.toJSONString) shouldBe k.jwk
      }
    }

    "compute at_hash with each algorithm's digest, as in the vectors" in {
      Vectors.atHashes.map(_._1).toSet shouldBe Set("RS256", "ES256", "EdDSA")
      for ((alg, token, expected) <- Vectors.atHashes)
        withClue(s"$alg '$token'")(TokenSigner.atHash(token, KeyAlgorithm.valueOf(alg)) shouldBe expected)
    }

    "issue tokens with every dev key that verify with its public key, with the contract's headers" in {
      for (k <- Vectors.keys) withClue(k.file) {
        val key = Vectors.signingKey(k.file)
        val pair = signerOf(key).issue(user, "public", UUID.randomUUID())
        val access = SignedJWT.parse(pair.accessToken)
        val id = SignedJWT.parse(pair.idToken)
        Vectors.verifies(pair.accessToken, key) shouldBe true
        Vectors.verifies(pair.idToken, key) shouldBe true
        access.getHeader.toJSONObject.asScala.toMap shouldBe Map("alg" -> k.alg, "typ" -> "at+jwt", "kid" -> k.kid)
        id.getHeader.toJSONObject.asScala.toMap shouldBe Map("alg" -> k.alg, "typ" -> "JWT", "kid" -> k.kid)
        // ES256: the 64-byte R||S of RFC 7518 §3.4, not DER; Ed25519 signatures are 64 bytes too.
        if (k.alg != "RS256") access.getSignature.decode().length shouldBe 64
        id.getJWTClaimsSet.getStringClaim("at_hash") shouldBe TokenSigner.atHash(pair.accessToken, key.algorithm)
        // The check can fail: the access token's signature over the ID token's claims does not verify.
        val Array(head, _, sig) = pair.accessToken.split('.')
        Vectors.verifies(s"$head.${pair.idToken.split('.')(1)}.$sig", key) shouldBe false
      }
    }

    "name the JCA provider that signs each algorithm" in {
      for (k <- Vectors.keys) withClue(k.file)(signerOf(Vectors.signingKey(k.file)).provider should not be empty)
    }

    "issue tokens with exactly the contract's claims" in {
      val session = UUID.randomUUID()
      val pair = signer.issue(user, "my-client", session)
      pair.expiresIn shouldBe 600
      val access = SignedJWT.parse(pair.accessToken)
      val id = SignedJWT.parse(pair.idToken)

      val a = access.getPayload.toJSONObject.asScala.toMap
      val i = id.getPayload.toJSONObject.asScala.toMap
      a.keySet shouldBe Set("iss", "aud", "sub", "iat", "exp", "sid", "jti", "client_id")
      i.keySet shouldBe Set("iss", "aud", "sub", "iat", "exp", "sid", "jti", "name", "preferred_username", "email", "at_hash")

      for (c <- List(a, i)) {
        c("iss") shouldBe "http://localhost:8080"
        c("sub") shouldBe user.id.toString
        c("iat").asInstanceOf[Number].longValue shouldBe now.getEpochSecond
        c("exp").asInstanceOf[Number].longValue shouldBe now.getEpochSecond + 600
      }
      // Both single strings, not arrays: the access token's audience is the resource, the ID token's the client.
      a("aud") shouldBe "channel-api"
      i("aud") shouldBe "my-client"
      a("client_id") shouldBe "my-client"
      a("sid") shouldBe session.toString // the session: the refresh-token family
      i("sid") shouldBe session.toString
      a("jti") should not be i("jti")
      UUID.fromString(a("sid").toString)
      UUID.fromString(a("jti").toString)
      UUID.fromString(i("jti").toString)
      i("name") shouldBe "John Doe"
      i("preferred_username") shouldBe "johndoe"
      i("email") shouldBe "john@example.com"
      i("at_hash") shouldBe TokenSigner.atHash(pair.accessToken, KeyAlgorithm.RS256)
    }

    "address the ID token to the client it is given and the access token to JWT_AUDIENCE" in {
      for (client <- List("public", "other-client")) withClue(client) {
        val pair = signer.issue(user, client, UUID.randomUUID())
        SignedJWT.parse(pair.idToken).getPayload.toJSONObject.get("aud") shouldBe client
        SignedJWT.parse(pair.accessToken).getPayload.toJSONObject.get("aud") shouldBe "channel-api"
      }
    }

    "use a fresh jti for every call, and the sid it is given" in {
      val session = UUID.randomUUID()
      val one = SignedJWT.parse(signer.issue(user, "public", session).accessToken).getJWTClaimsSet
      val two = SignedJWT.parse(signer.issue(user, "public", session).accessToken).getJWTClaimsSet
      one.getClaim("sid") shouldBe two.getClaim("sid")
      one.getJWTID should not be two.getJWTID
    }
  }
}
