package simpleauth

import java.security.SecureRandom
import java.util.HexFormat
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class RefreshTokenSpec extends AnyWordSpec with Matchers {
  private val hex = HexFormat.of()

  /** A generator that hands out the given bytes, to check the encoding against the vectors. */
  private final class FixedRandom(bytes: Array[Byte]) extends SecureRandom {
    override def nextBytes(out: Array[Byte]): Unit = System.arraycopy(bytes, 0, out, 0, out.length)
  }

  "RefreshToken" should {
    "encode 32 bytes as the vectors' tokens and hash them to the vectors' SHA-256" in {
      Vectors.validRefreshTokens should not be empty
      for ((bytes, token, sha256) <- Vectors.validRefreshTokens) withClue(token) {
        RefreshToken.generate(new FixedRandom(hex.parseHex(bytes))) shouldBe token
        hex.formatHex(RefreshToken.hash(token)) shouldBe sha256
        RefreshToken.isWellFormed(token) shouldBe true
      }
    }

    "refuse every malformed shape of the vectors" in {
      Vectors.malformedRefreshTokens should not be empty
      for ((name, token) <- Vectors.malformedRefreshTokens) withClue(name)(RefreshToken.isWellFormed(token) shouldBe false)
      RefreshToken.isWellFormed("") shouldBe false
    }

    "generate 43 characters of base64url, different every time" in {
      val random = new SecureRandom()
      val tokens = List.fill(1000)(RefreshToken.generate(random))
      tokens.foreach { t =>
        t.length shouldBe 43
        t should fullyMatch regex "[A-Za-z0-9_-]{43}"
        RefreshToken.isWellFormed(t) shouldBe true
      }
      tokens.distinct.size shouldBe tokens.size
    }
  }
}
