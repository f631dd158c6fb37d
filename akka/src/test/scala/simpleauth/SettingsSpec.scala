package simpleauth

import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class SettingsSpec extends AnyWordSpec with Matchers {
  private val keyFile = Vectors.specDir.resolve("keys/dev-rsa-2048.pem").toString
  private def env(extra: (String, String)*) = Map("JWT_PRIVATE_KEY_FILE" -> keyFile) ++ extra

  "Settings" should {
    "apply the contract's defaults" in {
      val s = Settings.fromEnv(env()).fold(e => fail(e.message), identity)
      s.host shouldBe "0.0.0.0"
      s.port shouldBe 8080
      s.dbPoolSize shouldBe 10
      s.dbAcquireTimeoutMs shouldBe 1000
      s.issuer shouldBe "http://localhost:8080"
      s.audience shouldBe "channel-api"
      s.tokenTtlSeconds shouldBe 600
      s.database shouldBe DatabaseSettings("jdbc:postgresql://127.0.0.1:5432/auth", Some("auth"), Some("auth"))
    }

    "translate libpq URLs to JDBC, keeping query parameters" in {
      Settings.parseDatabaseUrl("postgres://u:p%40ss@db.internal:6543/app?sslmode=disable") shouldBe
        Right(DatabaseSettings("jdbc:postgresql://db.internal:6543/app?sslmode=disable", Some("u"), Some("p@ss")))
      Settings.parseDatabaseUrl("postgresql://u@localhost/app") shouldBe
        Right(DatabaseSettings("jdbc:postgresql://localhost:5432/app", Some("u"), None))
    }

    "refuse malformed database URLs" in {
      for (bad <- List("not a url", "mysql://u:p@h/db", "postgres://", "postgres://u:p@:5432/db", "postgres://h:99999/db"))
        withClue(bad)(Settings.parseDatabaseUrl(bad).isLeft shouldBe true)
    }

    "take the key inline as well" in {
      val inline = Vectors.pem("keys/dev-rsa-2048.pem")
      Settings.fromEnv(Map("JWT_PRIVATE_KEY" -> inline)).isRight shouldBe true
    }

    "refuse a missing, PKCS#1, too small or non-RSA key" in {
      Settings.fromEnv(Map.empty).left.map(_.message).left.getOrElse("") should include("JWT_PRIVATE_KEY")
      Settings.fromEnv(Map("JWT_PRIVATE_KEY_FILE" -> "/nonexistent.pem")).isLeft shouldBe true
      for (f <- List("rsa-2048-pkcs1.pem", "rsa-1024-pkcs8.pem", "ec-p256-pkcs8.pem")) {
        val path = Vectors.specDir.resolve(s"keys/invalid/$f").toString
        withClue(f)(Settings.fromEnv(Map("JWT_PRIVATE_KEY_FILE" -> path)).isLeft shouldBe true)
      }
    }

    "refuse non-numeric sizes and raise tiny acquire timeouts to HikariCP's floor" in {
      Settings.fromEnv(env("DB_POOL_SIZE" -> "ten")).isLeft shouldBe true
      Settings.fromEnv(env("DB_ACQUIRE_TIMEOUT_MS" -> "50")).map(_.dbAcquireTimeoutMs) shouldBe Right(250)
    }
  }
}
