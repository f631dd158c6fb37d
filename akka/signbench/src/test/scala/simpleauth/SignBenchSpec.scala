package simpleauth

import com.nimbusds.jwt.SignedJWT
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import spray.json.*

class SignBenchSpec extends AnyWordSpec with Matchers {
  private val signer = new TokenSigner(Vectors.devKey, "http://localhost:8080", "channel-api", 600)

  "SignBench.measure" should {
    "issue verifiable token pairs on the calling thread for the timed duration" in {
      val r = SignBench.measure(signer, SignBench.SampleUser, warmupSeconds = 0.05, seconds = 0.2)
      r.tokenPairs should be > 0L
      r.seconds should be >= 0.2
      r.seconds should be < 2.0
      r.threadCpuSeconds should be > 0.0
      r.threadCpuSeconds should be <= r.seconds + 0.05 // one thread cannot use more CPU than wall time
      r.tokenChars should be > 0L

      Vectors.verifies(r.lastPair.accessToken, Vectors.devKey) shouldBe true
      Vectors.verifies(r.lastPair.idToken, Vectors.devKey) shouldBe true
      val id = SignedJWT.parse(r.lastPair.idToken)
      id.getJWTClaimsSet.getSubject shouldBe SignBench.SampleUser.id.toString
      id.getJWTClaimsSet.getClaim("at_hash") shouldBe TokenSigner.atHash(r.lastPair.accessToken, KeyAlgorithm.RS256)
    }

    "measure the service's signer with every key type" in {
      for (k <- Vectors.keys.filter(_.keyType != "rsa-4096")) withClue(k.file) {
        val key = Vectors.signingKey(k.file)
        val s = TestKeys.keySet(TestKeys.metrics(), key).signer
        val r = SignBench.measure(s, SignBench.SampleUser, warmupSeconds = 0.01, seconds = 0.05)
        r.tokenPairs should be > 0L
        Vectors.verifies(r.lastPair.idToken, key) shouldBe true
        SignedJWT.parse(r.lastPair.idToken).getHeader.getAlgorithm.getName shouldBe k.alg
      }
    }

    "report one JSON line with the four fields" in {
      val pair = signer.issue(SignBench.SampleUser, SignBench.SampleClientId, java.util.UUID.randomUUID())
      val line = SignBench.Result(1234, 3.0005, 2.9, 42, pair).jsonLine("AmazonCorrettoCryptoProvider 2.5.0")
      line should not include "\n"
      JsonParser(line).asJsObject.fields shouldBe Map(
        "token_pairs" -> JsNumber(1234),
        "seconds" -> JsNumber(3.0005),
        "thread_cpu_seconds" -> JsNumber(2.9),
        "provider" -> JsString("AmazonCorrettoCryptoProvider 2.5.0")
      )
    }
  }

  "SignBench.parseSeconds" should {
    "take one positive, finite number" in {
      SignBench.parseSeconds(Seq("5")) shouldBe Right(5.0)
      SignBench.parseSeconds(Seq("0.5")) shouldBe Right(0.5)
      SignBench.parseSeconds(Seq(".25")) shouldBe Right(0.25)
      SignBench.parseSeconds(Seq("1e1")) shouldBe Right(10.0)
    }

    "refuse anything else with the usage line" in {
      val bad = List(Nil, Seq("5", "6"), Seq(""), Seq("0"), Seq("0.0"), Seq("-1"), Seq("abc"), Seq("NaN"),
        Seq("Infinity"), Seq("1e999"), Seq("5d"), Seq("0x10"), Seq(" 5"))
      for (args <- bad)
        withClue(args) {
          val usage = SignBench.parseSeconds(args).left.getOrElse(fail("accepted"))
          usage should startWith("usage: ")
          usage should not include "\n"
        }
    }
  }
}
