package simpleauth

import com.nimbusds.jose.jwk.JWKSet
import com.nimbusds.jose.util.JSONObjectUtils
import zio.*
import zio.test.*

/** Both password schemes, the kid/JWK and at_hash against every entry of spec/vectors.json. */
object VectorsSpec extends ZIOSpecDefault:
  def spec = suite("spec/vectors.json")(
    test("there are vectors for both schemes, malformed strings, keys and at_hash") {
      assertTrue(
        Vectors.passwords.exists(_.hash.startsWith("$argon2id$")),
        Vectors.passwords.exists(_.hash.startsWith("$hmac-sha256$")),
        Vectors.passwords.exists(_.malformed),
        Vectors.keys.nonEmpty,
        Vectors.atHashes.nonEmpty
      )
    },
    suite("passwords")(
      Vectors.passwords.map { v =>
        test(s"${v.name}: ${if v.valid then "accepted" else if v.malformed then "unusable" else "rejected"}") {
          val result = Hashes.verify(v.password, v.hash)
          val expected =
            if v.valid then result == Verification.Match
            else if v.malformed then result.isInstanceOf[Verification.Unusable]
            else result == Verification.Mismatch
          assertTrue(expected)
        }
      }*
    ),
    test("PasswordVerifier.Live agrees with the vectors (on the blocking pool)") {
      ZIO.foreach(Vectors.passwords) { v =>
        PasswordVerifier.verify(v.password, v.hash).map(r => (r == Verification.Match) == v.valid)
      }.map(results => assertTrue(results.forall(identity)))
    }.provide(PasswordVerifier.live),
    test("the unknown-user decoy is a default-parameter argon2id hash that nothing matches") {
      val dummy = Hashes.newDummyArgon2id()
      assertTrue(
        dummy.startsWith("$argon2id$v=19$m=19456,t=2,p=1$"),
        Hashes.verify("TopSecret0!", dummy) == Verification.Mismatch
      )
    },
    suite("keys")(
      Vectors.keys.map { k =>
        test(s"${k.file}: kid is the RFC 7638 thumbprint, JWK n/e match") {
          val key = RsaKeys.load(Vectors.readSpecFile(k.file)).toOption.get
          val signer = TokenSigner.Live(key, "iss", "aud", 600)
          assertTrue(
            key.getKeyID == k.kid,
            key.getModulus.toString == k.n,
            key.getPublicExponent.toString == k.e,
            signer.jwks ==
              s"""{"keys":[{"kty":"RSA","use":"sig","alg":"RS256","kid":"${k.kid}","n":"${k.n}","e":"${k.e}"}]}"""
          )
        }
      }*
    ),
    test("Nimbus' own JWKSet has the same members and values but not the same bytes (why TokenSigner writes it)") {
      val k      = Vectors.keys.head
      val key    = RsaKeys.load(Vectors.readSpecFile(k.file)).toOption.get
      val ours   = TokenSigner.Live(key, "iss", "aud", 600).jwks
      val nimbus = new JWKSet(key.toPublicJWK).toString
      def parsed(json: String) = JSONObjectUtils.parse(json) // java.util maps and lists: members compared unordered
      assertTrue(nimbus != ours, parsed(nimbus) == parsed(ours))
    },
    suite("at_hash")(
      Vectors.atHashes.map { v =>
        test(s"at_hash of ${v.accessToken.take(20)}…") {
          assertTrue(RsaKeys.atHash(v.accessToken) == v.atHash)
        }
      }*
    ),
    suite("refused keys")(
      test("PKCS#1 is refused")(assertTrue(RsaKeys.load(Vectors.readSpecFile("keys/invalid/rsa-2048-pkcs1.pem")).left.exists(_.contains("PKCS#1")))),
      test("RSA 1024 is refused")(assertTrue(RsaKeys.load(Vectors.readSpecFile("keys/invalid/rsa-1024-pkcs8.pem")).left.exists(_.contains("2048")))),
      test("EC is refused")(assertTrue(RsaKeys.load(Vectors.readSpecFile("keys/invalid/ec-p256-pkcs8.pem")).isLeft)),
      test("garbage is refused")(assertTrue(RsaKeys.load("hello").isLeft))
    )
  )
