package simpleauth

import zio.*
import zio.json.*
import zio.json.ast.Json
import zio.test.*
import Vectors.{obj, str}

/** Both password schemes, every dev key's alg/kid/JWK, the bundle's JWKS and at_hash against spec/vectors.json. */
object VectorsSpec extends ZIOSpecDefault:
  def spec = suite("spec/vectors.json")(
    test("there are vectors for both schemes, malformed strings, keys and at_hash") {
      assertTrue(
        Vectors.passwords.exists(_.hash.startsWith("$argon2id$")),
        Vectors.passwords.exists(_.hash.startsWith("$hmac-sha256$")),
        Vectors.passwords.exists(_.malformed),
        Vectors.keys.map(_.alg).toSet == Set("RS256", "ES256", "EdDSA"),
        Vectors.atHashes.map(_.alg).toSet == Set("RS256", "ES256", "EdDSA")
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
    }.provide(PasswordVerifier.live, ZLayer.succeed(RoutesSpec.testConfig)),
    test("the unknown-user decoy is a default-parameter argon2id hash that nothing matches") {
      val dummy = Hashes.newDummyArgon2id()
      assertTrue(
        dummy.startsWith("$argon2id$v=19$m=19456,t=2,p=1$"),
        Hashes.verify("TopSecret0!", dummy) == Verification.Mismatch
      )
    },
    suite("keys")(
      Vectors.keys.map { k =>
        test(s"${k.file}: ${k.alg}, kid is the RFC 7638 thumbprint, the JWK is the vector's (same bytes)") {
          val key  = Vectors.signingKey(k.keyType)
          val keys = KeySet(key, Nil, "http://issuer.test")
          assertTrue(
            key.alg == k.alg,
            key.kid == k.kid,
            key.keyType.atHashDigest.replace("-", "").toLowerCase == k.atHashDigest,
            key.jwk.json == k.jwk,
            keys.jwks == s"""{"keys":[${k.jwk.toString}]}"""
          )
        }
      }*
    ),
    test("the public-key bundle: the signing key first, then the bundle's keys in file order, the repeated one once") {
      val bundlePem = Vectors.readSpecFile(Vectors.bundle.str("file"))
      val signing   = SigningKeys.loadSigningKey(Vectors.readSpecFile(Vectors.bundle.str("signing_key"))).toOption.get
      val expected  = Vectors.bundle.obj("jwks")
      val kids      = Vectors.bundle.get("kids").collect { case Json.Arr(ks) => ks.toList.collect { case Json.Str(k) => k } }.get
      for bundle <- ZIO.fromEither(SigningKeys.loadPublicKeys(bundlePem))
      yield
        val keys = KeySet(signing, bundle, "http://issuer.test")
        assertTrue(
          bundle.map(_.kid) == kids,
          keys.published.map(_.kid) == List(signing.kid) ++ kids.filterNot(_ == signing.kid),
          keys.jwks.fromJson[Json] == Right(expected),
          keys.jwks == expected.toString
        )
    },
    suite("at_hash")(
      Vectors.atHashes.map { v =>
        test(s"${v.alg} at_hash of ${v.accessToken.take(20)}…") {
          val keyType = KeyType.values.find(_.algName == v.alg).get
          assertTrue(SigningKeys.atHash(keyType, v.accessToken) == v.atHash)
        }
      }*
    ),
    suite("refused keys")(
      test("every private key in spec/keys/invalid/ is refused, each with its reason") {
        val reasons = Vectors.invalidPrivateKeys.map(f => f -> SigningKeys.loadSigningKey(Vectors.readSpecFile(f))).toMap
        def refused(file: String, words: String*) =
          reasons(s"keys/invalid/$file").left.exists(m => words.forall(m.contains) && !m.contains("\n"))
        assertTrue(
          Vectors.invalidPrivateKeys.size >= 6,
          reasons.values.forall(_.isLeft),
          refused("rsa-2048-pkcs1.pem", "PKCS#1"),
          refused("rsa-1024-pkcs8.pem", "RSA 1024 bits", "2048"),
          refused("ec-p256-sec1.pem", "SEC 1"),
          refused("ec-p384-pkcs8.pem", "P-384", "only P-256"),
          refused("ec-secp256k1-pkcs8.pem", "secp256k1", "only P-256"),
          refused("ed448-pkcs8.pem", "Ed448")
        )
      },
      test("a P-384 public key, a private key, a certificate or bad base64 in the bundle is refused; no block is no key") {
        def bundle(text: String) = SigningKeys.loadPublicKeys(text)
        val p256Public = Vectors.readSpecFile(Vectors.bundle.str("file")).split("(?<=-----END PUBLIC KEY-----\n)").toList(2)
        assertTrue(
          bundle(Vectors.readSpecFile("keys/invalid/public-ec-p384.pem")).left.exists(_.contains("P-384")),
          bundle(p256Public + Vectors.readSpecFile("keys/dev-ed25519.pem")).left.exists(_.contains("block 2 is PRIVATE KEY")),
          bundle("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").left.exists(_.contains("CERTIFICATE")),
          bundle(p256Public + "-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n").left.exists(_.contains("base64")),
          bundle("-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----\n").isLeft,
          bundle(p256Public).map(_.map(_.alg)) == Right(List("ES256")),
          bundle("") == Right(Nil),
          bundle("just a comment\n") == Right(Nil)
        )
      },
      test("garbage is refused")(
        assertTrue(
          SigningKeys.loadSigningKey("hello").isLeft,
          SigningKeys.loadSigningKey("-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n").isLeft,
          SigningKeys.loadSigningKey("-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n").isLeft
        )
      )
    )
  )
