package simpleauth

import java.nio.file.{Files, Path, StandardCopyOption}
import ch.qos.logback.classic.Level
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class KeyRingSpec extends AnyWordSpec with Matchers {
  private val tokens = KeySet.TokenSettings("https://issuer.example", "channel-api", 600)

  /** A key ring over a private key file and a bundle file in a temporary folder, as App builds it. */
  private final class Fixture {
    val dir: Path = Files.createTempDirectory("simple-auth-keys")
    val keyFile: Path = dir.resolve("key.pem")
    val bundleFile: Path = dir.resolve("public.pem")
    val metrics: Metrics = TestKeys.metrics()
    val logs = new LogCapture(s"key-ring-${System.nanoTime()}")
    def put(file: Path, specFile: String): Unit =
      Files.copy(Vectors.specDir.resolve(specFile), file, StandardCopyOption.REPLACE_EXISTING)
    put(keyFile, "keys/dev-rsa-2048.pem")
    Files.writeString(bundleFile, "")
    val sources = KeySources(PrivateKeySource.File(keyFile.toString), Some(bundleFile.toString))
    val ring = new KeyRing(
      KeySet.build(sources.load().fold(e => fail(e.message), identity), tokens, metrics).fold(e => fail(e.message), identity),
      () => sources.load().flatMap(KeySet.build(_, tokens, metrics)),
      metrics,
      logs.logger
    )
    def reloads(result: String): Double =
      metrics.registry.get("simpleauth.key.reloads").tag("result", result).counter().count()
  }

  "KeyRing.reload" should {
    "count both results from 0" in {
      val f = new Fixture
      (f.reloads("success"), f.reloads("failure")) shouldBe (0.0, 0.0)
    }

    "swap signer, JWKS and discovery to the new key in one step, and log kid, alg and the published keys" in {
      val f = new Fixture
      val before = f.ring.current
      before.algorithm shouldBe KeyAlgorithm.RS256
      f.put(f.keyFile, "keys/dev-ed25519.pem")
      f.put(f.bundleFile, "keys/dev-public-keys.pem")
      f.ring.reload().isRight shouldBe true
      val after = f.ring.current
      after.kid shouldBe Vectors.key("ed25519").kid
      after.signer.kid shouldBe after.kid
      after.jwks.keys.head.kid shouldBe after.kid
      after.jwks.keys.size shouldBe 4
      after.discovery.id_token_signing_alg_values_supported shouldBe List("EdDSA")
      before.kid shouldBe Vectors.key("rsa-2048").kid // the old snapshot is untouched
      (f.reloads("success"), f.reloads("failure")) shouldBe (1.0, 0.0)
      f.logs.events shouldBe List(Level.INFO ->
        s"keys reloaded: kid ${after.kid}, alg=EdDSA, 4 published keys")
    }

    "keep the old keys when a new file is bad, log one error naming the problem and count a failure" in {
      val f = new Fixture
      val before = f.ring.current
      for ((file, bad) <- List(f.keyFile -> "keys/invalid/ec-p384-pkcs8.pem", f.bundleFile -> "keys/invalid/public-ec-p384.pem")) {
        f.put(file, bad)
        f.ring.reload().isLeft shouldBe true
        f.ring.current should be theSameInstanceAs before
        f.put(f.keyFile, "keys/dev-rsa-2048.pem")
        Files.writeString(f.bundleFile, "")
      }
      Files.delete(f.keyFile)
      f.ring.reload().left.map(_.message).swap.getOrElse(fail()) should include("cannot be read")
      f.ring.current should be theSameInstanceAs before
      (f.reloads("success"), f.reloads("failure")) shouldBe (0.0, 3.0)
      val errors = f.logs.events
      errors.map(_._1) shouldBe List(Level.ERROR, Level.ERROR, Level.ERROR)
      errors.head._2 should (include("key reload failed") and include("secp384r1") and include(before.kid))
      errors(1)._2 should include("JWT_PUBLIC_KEYS_FILE")
      for ((_, line) <- errors) line should not include "BEGIN"
    }
  }
}
