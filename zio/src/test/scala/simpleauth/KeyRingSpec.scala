package simpleauth

import java.nio.charset.StandardCharsets.US_ASCII
import java.nio.file.{Files, Path}
import java.security.{PublicKey, Signature}
import java.util.{Base64, UUID}

import zio.*
import zio.json.*
import zio.json.ast.Json
import zio.test.*
import Vectors.{obj, str}
import com.nimbusds.jose.jwk.{ECKey, OctetKeyPair, RSAKey}

object KeyRingSpec extends ZIOSpecDefault:
  val user = User(UUID.fromString("953b48eb-02ef-f93e-f582-e9b9ce4685b5"), "johndoe", "John Doe", "john@example.com", "x")

  /** The settings a signer takes its claims from (no database, no port). */
  def settings(source: KeySources = RoutesSpec.testConfig.keySources, defaultClientId: String = "public"): Settings =
    RoutesSpec.testConfig.copy(issuer = "http://issuer.test", keySources = source, defaultClientId = defaultClientId)

  def keySet(keyType: String): KeySet =
    KeySet.from(KeyMaterial(Vectors.signingKey(keyType), Nil), "http://issuer.test", "channel-api", 600)

  def signerFor(keyType: String, defaultClientId: String = "public"): UIO[KeyRing.Live] =
    KeyRing.make(keySet(keyType), settings(defaultClientId = defaultClientId))

  /** The signing key's public key, from its JWK. */
  def publicKeyOf(key: SigningKey): PublicKey = key.publicJwk match
    case rsa: RSAKey => rsa.toPublicKey
    case ec: ECKey   => ec.toPublicKey
    case okp: OctetKeyPair =>
      val spkiPrefix = java.util.HexFormat.of().parseHex("302a300506032b6570032100")
      java.security.KeyFactory.getInstance("Ed25519", "SunEC").generatePublic(new java.security.spec.X509EncodedKeySpec(spkiPrefix ++ okp.getX.decode()))
    case other => sys.error(s"unexpected ${other.getKeyType}")

  def part(jwt: String, i: Int): Json.Obj =
    new String(Base64.getUrlDecoder.decode(jwt.split('.')(i))).fromJson[Json].toOption.get.asInstanceOf[Json.Obj]

  def keysOf(o: Json.Obj): Set[String] = o.fields.map(_._1).toSet

  /**
   * Verifies a compact JWS with the JDK's own providers (not ACCP, which signed it): RS256 with SunRsaSign, ES256 as
   * the 64-byte R‖S form with SunEC's P1363 ECDSA, EdDSA with SunEC's Ed25519.
   */
  def verifies(jwt: String, alg: String, key: PublicKey): Boolean =
    val parts = jwt.split('.')
    val (name, provider) = alg match
      case "RS256" => ("SHA256withRSA", "SunRsaSign")
      case "ES256" => ("SHA256withECDSAinP1363Format", "SunEC")
      case _       => ("Ed25519", "SunEC")
    val signature = Base64.getUrlDecoder.decode(parts(2))
    val v         = Signature.getInstance(name, provider)
    v.initVerify(key)
    v.update(s"${parts(0)}.${parts(1)}".getBytes(US_ASCII))
    (alg != "ES256" || signature.length == 64) && v.verify(signature)

  def spec = suite("KeyRing")(
    suite("every dev key")(
      Vectors.keys.map { k =>
        test(s"${k.keyType}: ${k.alg} headers (typ at+jwt / JWT), tokens verify with the public key, at_hash by the alg's digest") {
          for
            signer <- signerFor(k.keyType)
            pair   <- signer.issue(user, None, UUID.randomUUID())
            keys   <- signer.keys
          yield
            val pub = publicKeyOf(keys.signing)
            assertTrue(
              part(pair.accessToken, 0).get("alg").contains(Json.Str(k.alg)),
              part(pair.accessToken, 0).get("typ").contains(Json.Str("at+jwt")),
              part(pair.accessToken, 0).get("kid").contains(Json.Str(k.kid)),
              keysOf(part(pair.accessToken, 0)) == Set("alg", "typ", "kid"),
              keysOf(part(pair.idToken, 0)) == Set("alg", "typ", "kid"),
              part(pair.idToken, 0).get("alg").contains(Json.Str(k.alg)),
              part(pair.idToken, 0).get("typ").contains(Json.Str("JWT")),
              part(pair.idToken, 0).get("kid").contains(Json.Str(k.kid)),
              verifies(pair.accessToken, k.alg, pub),
              verifies(pair.idToken, k.alg, pub),
              !verifies(pair.idToken.dropRight(4) + "AAAA", k.alg, pub),
              part(pair.idToken, 1).get("at_hash").contains(Json.Str(TokenSigner.atHash(pair.accessToken, keys.signing.algorithm))),
              part(pair.idToken, 1).get("at_hash").collect { case Json.Str(h) => h.length }.contains(if k.alg == "EdDSA" then 43 else 22),
              keys.discovery.contains(s""""id_token_signing_alg_values_supported":["${k.alg}"]"""),
              pair.expiresIn == 600L
            )
        }
      }*
    ),
    test("claims are exactly the contract's, sharing sid/iat/exp, with distinct jti, client_id and a correct at_hash") {
      for
        signer <- signerFor("rsa-2048", defaultClientId = "mobile-app")
        pair   <- signer.issue(user, None, UUID.randomUUID())
        named  <- signer.issue(user, Some("web client"), UUID.randomUUID())
      yield
        val a = part(pair.accessToken, 1)
        val i = part(pair.idToken, 1)
        def num(o: Json.Obj, k: String) = o.get(k).collect { case Json.Num(n) => n.longValue }.get
        assertTrue(
          keysOf(a) == Set("iss", "aud", "sub", "iat", "exp", "sid", "jti", "client_id"),
          keysOf(i) == Set("iss", "aud", "sub", "iat", "exp", "sid", "jti", "name", "preferred_username", "email", "at_hash"),
          a.get("client_id").contains(Json.Str("mobile-app")),
          part(named.accessToken, 1).get("client_id").contains(Json.Str("web client")),
          a.get("aud").contains(Json.Str("channel-api")),
          a.get("iss").contains(Json.Str("http://issuer.test")),
          a.get("sub").contains(Json.Str(user.id.toString)),
          a.get("sid") == i.get("sid"),
          a.get("jti") != i.get("jti"),
          num(a, "iat") == num(i, "iat"),
          num(a, "exp") == num(a, "iat") + 600,
          num(i, "exp") == num(a, "exp"),
          i.get("name").contains(Json.Str("John Doe")),
          i.get("preferred_username").contains(Json.Str("johndoe")),
          i.get("email").contains(Json.Str("john@example.com")),
          i.get("at_hash").contains(Json.Str(TokenSigner.atHash(pair.accessToken, KeyAlgorithm.RS256)))
        )
    },
    test("sid is the session (refresh-token family) given, in both tokens") {
      val (s1, s2) = (UUID.randomUUID(), UUID.randomUUID())
      for
        signer <- signerFor("rsa-2048")
        p1     <- signer.issue(user, None, s1)
        p2     <- signer.issue(user, None, s2)
        p3     <- signer.issue(user, None, s1)
      yield assertTrue(
        part(p1.accessToken, 1).get("sid").contains(Json.Str(s1.toString)),
        part(p1.idToken, 1).get("sid").contains(Json.Str(s1.toString)),
        part(p2.accessToken, 1).get("sid").contains(Json.Str(s2.toString)),
        part(p3.idToken, 1).get("sid").contains(Json.Str(s1.toString)),
        part(p1.accessToken, 1).get("jti") != part(p3.accessToken, 1).get("jti")
      )
    },
    test("the discovery document: exactly the contract's members, URLs joined without doubling a slash") {
      val doc = KeySet.discovery("https://login.example.test/tenant-1/", "ES256").fromJson[Json].toOption.get.asInstanceOf[Json.Obj]
      def strs(values: String*) = Json.Arr(Chunk.fromIterable(values.map(Json.Str(_))))
      assertTrue(
        doc == Json.Obj(
          "issuer"                                -> Json.Str("https://login.example.test/tenant-1/"),
          "token_endpoint"                        -> Json.Str("https://login.example.test/tenant-1/token"),
          "jwks_uri"                              -> Json.Str("https://login.example.test/tenant-1/.well-known/jwks.json"),
          "grant_types_supported"                 -> strs("password", "refresh_token"),
          "revocation_endpoint"                   -> Json.Str("https://login.example.test/tenant-1/revoke"),
          "revocation_endpoint_auth_methods_supported" -> strs("none"),
          "response_types_supported"              -> strs(),
          "subject_types_supported"               -> strs("public"),
          "id_token_signing_alg_values_supported" -> strs("ES256"),
          "token_endpoint_auth_methods_supported" -> strs("none"),
          "claims_supported" -> strs("iss", "aud", "sub", "iat", "exp", "sid", "jti", "client_id", "name", "preferred_username", "email", "at_hash")
        ),
        KeySet.discovery("http://localhost:8080", "RS256").contains(""""jwks_uri":"http://localhost:8080/.well-known/jwks.json""""),
        KeySet.discovery("http://localhost:8080", "RS256").contains(""""token_endpoint":"http://localhost:8080/token"""")
      )
    },
    suite("reload (SIGHUP)")(
      test("a reload that fails keeps the keys in service and counts a failure; a good one swaps signer, JWKS and discovery") {
        val dir    = Files.createTempDirectory("keys")
        val key    = dir.resolve("key.pem")
        val bundle = dir.resolve("bundle.pem")
        def write(p: Path, text: String) = ZIO.attemptBlocking(Files.writeString(p, text)).orDie
        val rsa    = Vectors.key("rsa-2048")
        val ed     = Vectors.key("ed25519")
        for
          _       <- write(key, Vectors.readSpecFile(rsa.file)) *> write(bundle, "")
          source   = KeySources(PrivateKeySource.File(key.toString), Some(bundle.toString))
          cfg      = settings(source)
          keys     = keySet("rsa-2048")
          signer  <- KeyRing.make(keys, cfg)
          before  <- Metrics.keyReloadCounts
          // 1. a key of a refused type
          _       <- write(key, Vectors.readSpecFile("keys/invalid/ec-p384-pkcs8.pem"))
          badKey  <- signer.reload
          afterBadKey <- signer.keys
          // 2. a good key, a bundle with a refused key
          _       <- write(key, Vectors.readSpecFile("keys/dev-ed25519.pem")) *> write(bundle, Vectors.readSpecFile("keys/invalid/public-ec-p384.pem"))
          badBundle <- signer.reload
          afterBadBundle <- signer.keys
          pairOld <- signer.issue(user, None, UUID.randomUUID())
          failed  <- Metrics.keyReloadCounts
          // 3. good files: Ed25519 signs, the old RSA key stays published
          _       <- write(bundle, Vectors.readSpecFile(Vectors.bundle.str("file")).split("(?<=-----END PUBLIC KEY-----\n)").head)
          good    <- signer.reload
          after   <- signer.keys
          pairNew <- signer.issue(user, None, UUID.randomUUID())
          counts  <- Metrics.keyReloadCounts
        yield assertTrue(
          !badKey, !badBundle, good,
          afterBadKey eq keys, afterBadBundle eq keys,
          part(pairOld.accessToken, 0).get("kid").contains(Json.Str(rsa.kid)),
          failed == (before._1, before._2 + 2),
          counts == (before._1 + 1, before._2 + 2),
          after.signing.kid == ed.kid,
          after.published.map(_.getKeyID) == List(ed.kid, rsa.kid),
          after.discovery.contains(""""id_token_signing_alg_values_supported":["EdDSA"]"""),
          part(pairNew.idToken, 0).get("alg").contains(Json.Str("EdDSA")),
          verifies(pairNew.idToken, "EdDSA", publicKeyOf(after.signing)),
          part(pairNew.idToken, 1).get("at_hash").contains(Json.Str(TokenSigner.atHash(pairNew.accessToken, KeyAlgorithm.EdDSA)))
        )
      },
      test("with an inline key, a reload takes that key again and re-reads the bundle") {
        val bundle = Files.createTempFile("bundle", ".pem")
        val rsa    = Vectors.key("rsa-2048")
        for
          cfg    <- ZIO.succeed(settings(KeySources(PrivateKeySource.Inline(Vectors.devKeyPem), Some(bundle.toString))))
          signer <- KeyRing.make(keySet("rsa-2048"), cfg)
          _      <- ZIO.attemptBlocking(Files.writeString(bundle, Vectors.readSpecFile(Vectors.bundle.str("file")))).orDie
          ok     <- signer.reload
          after  <- signer.keys
        yield assertTrue(ok, after.signing.kid == rsa.kid, after.jwks == Vectors.bundle.obj("jwks").toString)
      }
    )
  ) @@ TestAspect.withLiveClock @@ TestAspect.sequential
