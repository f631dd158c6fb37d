package simpleauth

import zio.*
import zio.test.*

object SignBenchSpec extends ZIOSpecDefault:

  /** The contract's environment, as the harness passes it. */
  private def env(entries: (String, String)*): Map[String, String] =
    Map(
        "JWT_ISSUER"        -> "http://localhost:8080",
        "JWT_AUDIENCE"      -> "channel-api",
        "TOKEN_TTL_SECONDS" -> "600",
        "DATABASE_URL"      -> "postgres://auth:auth@127.0.0.1:1/auth",
        "PORT"              -> "8080"
      ) ++ entries

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
      for refused <- SignBench.signerFrom(env()).flip
      yield assertTrue(Main.refusal(refused).startsWith("simple-auth-zio: no signing key: set JWT_PRIVATE_KEY_FILE"))
    },
    suite("a short run with the service's signer makes token pairs that verify with the public key")(
      Vectors.keys.map { k =>
        test(s"${k.keyType} (${k.alg})") {
          for
            loaded <- SignBench.signerFrom(env("JWT_PRIVATE_KEY_FILE" -> Vectors.specDir.resolve(k.file).toString))
            keys   <- loaded._1.keys
            result <- ZIO.succeed(SignBench.measure(loaded._1, SignBench.sampleUser, warmupSeconds = 0.05, seconds = 0.2))
          yield
            val last = result.lastPair
            val line = result.json(keys.signer.provider)
            val pub  = KeyRingSpec.publicKeyOf(keys.signing)
            assertTrue(
              keys.signing.algorithm.name == k.alg,
              keys.signer.provider.startsWith("AmazonCorrettoCryptoProvider"),
              result.tokenPairs > 0,
              result.seconds >= 0.2,
              result.threadCpuSeconds > 0,
              result.tokenChars >= result.tokenPairs * 2 * 3,
              KeyRingSpec.verifies(last.accessToken, k.alg, pub),
              KeyRingSpec.verifies(last.idToken, k.alg, pub),
              KeyRingSpec.part(last.idToken, 1).get("at_hash").contains(zio.json.ast.Json.Str(TokenSigner.atHash(last.accessToken, keys.signing.algorithm))),
              line.startsWith(s"""{"token_pairs":${result.tokenPairs},"seconds":"""),
              line.endsWith(s""","provider":"${keys.signer.provider}"}""")
            )
        }
      }*
    )
  ) @@ TestAspect.withLiveClock @@ TestAspect.sequential
