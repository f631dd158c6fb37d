package simpleauth

import com.nimbusds.jose.crypto.RSASSAVerifier
import com.nimbusds.jwt.SignedJWT
import java.time.Instant
import java.util.UUID
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import scala.jdk.CollectionConverters.*

class TokenSignerSpec extends AnyWordSpec with Matchers {
  private val user = User(UUID.fromString("2f6ac9d1-8f3c-4e59-9d0b-9b7e5a0f4c11"), "johndoe", "John Doe", "john@example.com", "x")
  private val now = Instant.ofEpochSecond(1_800_000_000L)
  private val signer = new TokenSigner(Vectors.devKey, "http://localhost:8080", "channel-api", 600, Vectors.metrics(), () => now)

  "TokenSigner" should {
    "name every dev key by its RFC 7638 thumbprint and publish its JWK" in {
      Vectors.keys should not be empty
      for (k <- Vectors.keys) {
        val key = Settings.parsePkcs8RsaKey(Vectors.pem(k.file)).fold(e => fail(e.message), identity)
        val s = new TokenSigner(key, "i", "a", 1, Vectors.metrics())
        s.kid shouldBe k.kid
        s.jwks().getKeys.size shouldBe 1
        val jwk = s.jwks().getKeys.get(0).toRSAKey
        jwk.isPrivate shouldBe false
        (jwk.getKeyType.getValue, jwk.getKeyUse.identifier, jwk.getAlgorithm.getName) shouldBe ("RSA", "sig", "RS256")
        (jwk.getKeyID, jwk.getModulus.toString, jwk.getPublicExponent.toString) shouldBe (k.kid, k.n, k.e)
      }
    }

    "compute at_hash as in the vectors" in {
      Vectors.atHashes should not be empty
      for ((token, expected) <- Vectors.atHashes) TokenSigner.atHash(token) shouldBe expected
    }

    "issue RS256 tokens with exactly the contract's header and claims" in {
      val pair = signer.issue(user)
      pair.expiresIn shouldBe 600
      val access = SignedJWT.parse(pair.accessToken)
      val id = SignedJWT.parse(pair.idToken)
      val verifier = new RSASSAVerifier(Vectors.devKey.publicKey)
      access.verify(verifier) shouldBe true
      id.verify(verifier) shouldBe true

      for (t <- List(access, id))
        t.getHeader.toJSONObject.asScala.toMap shouldBe Map("alg" -> "RS256", "typ" -> "JWT", "kid" -> signer.kid)

      val a = access.getPayload.toJSONObject.asScala.toMap
      val i = id.getPayload.toJSONObject.asScala.toMap
      a.keySet shouldBe Set("iss", "aud", "sub", "iat", "exp", "sid", "jti")
      i.keySet shouldBe Set("iss", "aud", "sub", "iat", "exp", "sid", "jti", "name", "preferred_username", "email", "at_hash")

      for (c <- List(a, i)) {
        c("iss") shouldBe "http://localhost:8080"
        c("aud") shouldBe "channel-api" // a plain string, not an array
        c("sub") shouldBe user.id.toString
        c("iat").asInstanceOf[Number].longValue shouldBe now.getEpochSecond
        c("exp").asInstanceOf[Number].longValue shouldBe now.getEpochSecond + 600
      }
      a("sid") shouldBe i("sid")
      a("jti") should not be i("jti")
      UUID.fromString(a("sid").toString)
      UUID.fromString(a("jti").toString)
      UUID.fromString(i("jti").toString)
      i("name") shouldBe "John Doe"
      i("preferred_username") shouldBe "johndoe"
      i("email") shouldBe "john@example.com"
      i("at_hash") shouldBe TokenSigner.atHash(pair.accessToken)
    }

    "use a fresh sid and jti for every call" in {
      val one = SignedJWT.parse(signer.issue(user).accessToken).getJWTClaimsSet
      val two = SignedJWT.parse(signer.issue(user).accessToken).getJWTClaimsSet
      one.getClaim("sid") should not be two.getClaim("sid")
      one.getJWTID should not be two.getJWTID
    }
  }
}
