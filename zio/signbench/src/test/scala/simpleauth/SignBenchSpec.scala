package simpleauth

import com.nimbusds.jose.JWSObject
import com.nimbusds.jose.crypto.RSASSAVerifier
import zio.*
import zio.test.*

object SignBenchSpec extends ZIOSpecDefault:
  private val devKey = Vectors.specDir.resolve("keys/dev-rsa-2048.pem").toString

  /** The contract's environment, as the harness passes it (read through ZIO's config provider here). */
  private def env(entries: (String, String)*): ConfigProvider =
    ConfigProvider.fromMap(
      Map(
        "JWT_ISSUER"        -> "http://localhost:8080",
        "JWT_AUDIENCE"      -> "channel-api",
        "TOKEN_TTL_SECONDS" -> "600",
        "DATABASE_URL"      -> "postgres://auth:auth@127.0.0.1:1/auth",
        "PORT"              -> "8080"
      ) ++ entries
    )

  def spec = suite("SignBench")(
    test("the duration argument: one positive, finite decimal number") {
      def ok(args: String*)  = SignBench.parseSeconds(args)
      def bad(args: String*) = SignBench.parseSeconds(args).isLeft
      assertTrue(
        ok("5") == Right(5.0),
        ok("0.5") == Right(0.5),
        ok(".25") == Right(0.25),
        ok("2e-1") == Right(0.2),
        bad(),
        bad("1", "2"),
        bad(""),
        bad("0"),
        bad("0.0"),
        bad("-1"),
        bad("abc"),
        bad("5s"),
        bad("NaN"),
        bad("Infinity"),
        bad("1e999"),
        bad("0x10")
      )
    },
    test("a missing key is refused with the service's own message") {
      for refused <- SignBench.signer.flip.withConfigProvider(env())
      yield assertTrue(
        refused.line == "simple-auth-zio: invalid configuration: one of JWT_PRIVATE_KEY_FILE or JWT_PRIVATE_KEY is required"
      )
    },
    test("a short run with the service's signer makes token pairs that verify with the public key") {
      for
        loaded <- SignBench.signer.withConfigProvider(env("JWT_PRIVATE_KEY_FILE" -> devKey))
        result <- ZIO.succeed(SignBench.measure(loaded._1, SignBench.sampleUser, warmupSeconds = 0.05, seconds = 0.2))
      yield
        val verifier = new RSASSAVerifier(RsaKeys.load(Vectors.devKeyPem).toOption.get.toRSAPublicKey)
        val last     = result.lastPair
        val line     = result.json("Test 1.0")
        assertTrue(
          result.tokenPairs > 0,
          result.seconds >= 0.2,
          result.threadCpuSeconds > 0,
          result.tokenChars >= result.tokenPairs * 2 * 3,
          JWSObject.parse(last.accessToken).verify(verifier),
          JWSObject.parse(last.idToken).verify(verifier),
          JWSObject.parse(last.idToken).getPayload.toJSONObject.get("at_hash") == RsaKeys.atHash(last.accessToken),
          line.startsWith(s"""{"token_pairs":${result.tokenPairs},"seconds":"""),
          line.endsWith(""","provider":"Test 1.0"}""")
        )
    }
  ) @@ TestAspect.withLiveClock @@ TestAspect.sequential
