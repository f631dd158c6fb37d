package simpleauth

import java.util.{Base64, HexFormat}

import zio.test.*

/** Refresh tokens against spec/vectors.json `refresh_tokens`: encoding, SHA-256, and the shape check. */
object RefreshTokenSpec extends ZIOSpecDefault:
  private val hex = HexFormat.of()

  def spec = suite("RefreshToken")(
    test("the vectors: 32 bytes encode to the token, and the token's SHA-256 is the stored hash") {
      assertTrue(
        Vectors.refreshTokens.size >= 3,
        Vectors.refreshTokens.forall { v =>
          RefreshToken.encode(hex.parseHex(v.bytesHex)) == v.token &&
          hex.formatHex(RefreshToken.hash(v.token)) == v.sha256Hex &&
          RefreshToken.isWellFormed(v.token)
        }
      )
    },
    test("every malformed vector is refused by the shape check") {
      val accepted = Vectors.malformedRefreshTokens.filter((_, token) => RefreshToken.isWellFormed(token))
      assertTrue(Vectors.malformedRefreshTokens.size >= 9, accepted.isEmpty)
    },
    test("more shapes: empty, 43 of anything outside [A-Za-z0-9_-], 42 and 44 characters") {
      assertTrue(
        !RefreshToken.isWellFormed(""),
        !RefreshToken.isWellFormed("A" * 42), RefreshToken.isWellFormed("A" * 43), !RefreshToken.isWellFormed("A" * 44),
        List('+', '/', '=', '.', ' ', '~', '\u0000', 'é', '\u0660').forall(c => !RefreshToken.isWellFormed(c.toString + "A" * 42)),
        RefreshToken.isWellFormed("-" * 21 + "_" * 22)
      )
    },
    test("generated tokens: 43 well-formed characters of 32 random bytes, never the same twice") {
      val tokens = List.fill(1000)(RefreshToken.generate())
      assertTrue(
        tokens.forall(t => t.length == 43 && RefreshToken.isWellFormed(t)),
        tokens.forall(t => Base64.getUrlDecoder.decode(t).length == 32),
        tokens.distinct.size == tokens.size,
        RefreshToken.hash(tokens.head).length == 32
      )
    }
  )
