package simpleauth

import zio.*
import zio.json.*
import zio.json.ast.Json
import zio.test.*
import Vectors.{obj, str}

/**
 * What this stack renders or runs of spec/vectors.json: every dev key's JWK and the bundle's JWKS byte for byte (the
 * core parses the keys and checks the vectors' hashes, at_hash and refusals), and the ZIO password verifier.
 */
object VectorsSpec extends ZIOSpecDefault:
  def spec = suite("spec/vectors.json")(
    test("PasswordVerifier.Live agrees with the vectors (on the blocking pool)") {
      ZIO.foreach(Vectors.passwords) { v =>
        PasswordVerifier.verify(v.password, v.hash).map(r => (r == Verification.Match) == v.valid)
      }.map(results => assertTrue(Vectors.passwords.size > 10, results.forall(identity)))
    }.provide(PasswordVerifier.live, ZLayer.succeed(RoutesSpec.testConfig)),
    suite("keys")(
      Vectors.keys.map { k =>
        test(s"${k.file}: ${k.alg}, the JWK is the vector's (same bytes)") {
          val key  = Vectors.signingKey(k.keyType)
          val keys = KeySet.from(KeyMaterial(key, Nil), "http://issuer.test", "channel-api", 600)
          assertTrue(
            key.algorithm.name == k.alg,
            key.kid == k.kid,
            KeySet.jwk(key.publicJwk) == k.jwk,
            keys.jwks == s"""{"keys":[${k.jwk.toString}]}"""
          )
        }
      }*
    ),
    test("the public-key bundle: the signing key first, then the bundle's keys in file order, the repeated one once") {
      val bundlePem = Vectors.readSpecFile(Vectors.bundle.str("file"))
      val signing   = Keys.parsePrivateKey(Vectors.readSpecFile(Vectors.bundle.str("signing_key"))).toOption.get
      val expected  = Vectors.bundle.obj("jwks")
      val kids      = Vectors.bundle.get("kids").collect { case Json.Arr(ks) => ks.toList.collect { case Json.Str(k) => k } }.get
      for bundle <- ZIO.fromEither(Keys.parsePublicKeys(bundlePem))
      yield
        val keys = KeySet.from(KeyMaterial(signing, bundle), "http://issuer.test", "channel-api", 600)
        assertTrue(
          bundle.map(_.getKeyID) == kids,
          keys.published.map(_.getKeyID) == List(signing.kid) ++ kids.filterNot(_ == signing.kid),
          keys.jwks.fromJson[Json] == Right(expected),
          keys.jwks == expected.toString
        )
    }
  )
