package simpleauth

import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class PasswordVerifierSpec extends AnyWordSpec with Matchers {
  private val verifier = new PasswordVerifier(TestKeys.metrics())

  "PasswordVerifier" should {
    "have vectors to check" in {
      Vectors.passwords.size should be > 10
    }

    for (v <- Vectors.passwords) {
      val expected =
        if (v.valid) "Match" else if (v.malformed) "Unusable" else "Mismatch"
      s"answer $expected for vector ${v.name}" in {
        val result = verifier.verify(v.password, v.hash)
        if (v.valid) result shouldBe Verification.Match
        else if (v.malformed) result shouldBe a[Verification.Unusable]
        else result shouldBe Verification.Mismatch
      }
    }

    "treat the dummy hash as a well-formed argon2id hash with the default parameters" in {
      PasswordHashes.DummyArgon2idHash should startWith("$argon2id$v=19$m=19456,t=2,p=1$")
      verifier.verify("anything", PasswordHashes.DummyArgon2idHash) shouldBe Verification.Mismatch
    }

    "be safe to use from many threads at once" in {
      import scala.concurrent.{Await, Future}
      import scala.concurrent.ExecutionContext.Implicits.global
      import scala.concurrent.duration.*
      val legacy = Vectors.passwords.filter(_.hash.startsWith("$hmac-sha256$")).filterNot(_.malformed)
      val results = Await.result(
        Future.sequence((1 to 200).map(i => Future { val v = legacy(i % legacy.size); verifier.verify(v.password, v.hash) == Verification.Match == v.valid })),
        30.seconds)
      results.forall(identity) shouldBe true
    }

    "spend the unknown user's dummy argon2id work on an unusable hash, and only there" in {
      val v = new PasswordVerifier(TestKeys.metrics())
      v.verify("TopSecret0!", "$disabled$2026-11-23T17:00:00Z") shouldBe a[Verification.Unusable]
      v.verify("TopSecret0!", "$bcrypt$2b$10$xyz") shouldBe a[Verification.Unusable]
      v.equalisationCount shouldBe 2
      v.verifyUnknownUser("TopSecret0!")
      v.equalisationCount shouldBe 3
      val usable = Vectors.passwords.filterNot(_.malformed)
      usable.foreach(p => v.verify(p.password, p.hash))
      v.equalisationCount shouldBe 3
    }
  }
}
