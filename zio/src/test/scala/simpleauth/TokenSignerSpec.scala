package simpleauth

import java.util.{Base64, UUID}

import com.nimbusds.jose.JWSObject
import com.nimbusds.jose.crypto.RSASSAVerifier
import zio.*
import zio.json.*
import zio.json.ast.Json
import zio.test.*

object TokenSignerSpec extends ZIOSpecDefault:
  val key    = RsaKeys.load(Vectors.devKeyPem).toOption.get
  val signer = TokenSigner.Live(key, "http://issuer.test", "channel-api", 600)
  val user   = User(UUID.fromString("953b48eb-02ef-f93e-f582-e9b9ce4685b5"), "johndoe", "John Doe", "john@example.com", "x")

  def part(jwt: String, i: Int): Json.Obj =
    new String(Base64.getUrlDecoder.decode(jwt.split('.')(i))).fromJson[Json].toOption.get.asInstanceOf[Json.Obj]

  def keysOf(o: Json.Obj): Set[String] = o.fields.map(_._1).toSet

  def spec = suite("TokenSigner")(
    test("header is exactly alg/typ/kid and both tokens verify with the public key") {
      for pair <- signer.issue(user)
      yield
        val verifier = new RSASSAVerifier(key.toRSAPublicKey)
        assertTrue(
          keysOf(part(pair.accessToken, 0)) == Set("alg", "typ", "kid"),
          keysOf(part(pair.idToken, 0)) == Set("alg", "typ", "kid"),
          part(pair.accessToken, 0).get("typ").contains(Json.Str("JWT")),
          part(pair.accessToken, 0).get("alg").contains(Json.Str("RS256")),
          part(pair.accessToken, 0).get("kid").contains(Json.Str(key.getKeyID)),
          JWSObject.parse(pair.accessToken).verify(verifier),
          JWSObject.parse(pair.idToken).verify(verifier),
          pair.expiresIn == 600L
        )
    },
    test("claims are exactly the contract's, sharing sid/iat/exp, with distinct jti and a correct at_hash") {
      for pair <- signer.issue(user)
      yield
        val a = part(pair.accessToken, 1)
        val i = part(pair.idToken, 1)
        def num(o: Json.Obj, k: String) = o.get(k).collect { case Json.Num(n) => n.longValue }.get
        assertTrue(
          keysOf(a) == Set("iss", "aud", "sub", "iat", "exp", "sid", "jti"),
          keysOf(i) == Set("iss", "aud", "sub", "iat", "exp", "sid", "jti", "name", "preferred_username", "email", "at_hash"),
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
          i.get("at_hash").contains(Json.Str(RsaKeys.atHash(pair.accessToken)))
        )
    },
    test("every call gets a fresh sid") {
      for
        p1 <- signer.issue(user)
        p2 <- signer.issue(user)
      yield assertTrue(part(p1.accessToken, 1).get("sid") != part(p2.accessToken, 1).get("sid"))
    }
  ) @@ TestAspect.withLiveClock
