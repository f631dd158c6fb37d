package simpleauth

import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class JdbcDatabaseSpec extends AnyWordSpec with Matchers {
  private def settings(vars: (String, String)*) = Settings.fromEnv(Map(
    "JWT_PRIVATE_KEY_FILE" -> Vectors.specDir.resolve("keys/dev-rsa-2048.pem").toString
  ) ++ vars).fold(e => fail(e.message), identity)

  "JdbcDatabase.config" should {
    "retire connections by DB_MAX_LIFETIME_SECONDS and DB_IDLE_TIMEOUT_SECONDS, 600 s and 300 s by default" in {
      val c = JdbcDatabase.config(settings())
      c.getMaxLifetime shouldBe 600000L
      c.getIdleTimeout shouldBe 300000L
      val set = JdbcDatabase.config(settings("DB_MAX_LIFETIME_SECONDS" -> "45", "DB_IDLE_TIMEOUT_SECONDS" -> "12"))
      set.getMaxLifetime shouldBe 45000L
      set.getIdleTimeout shouldBe 12000L
    }

    "let the pool shrink to none while idle (HikariCP retires idle connections only down to minimumIdle)" in {
      val c = JdbcDatabase.config(settings("DB_POOL_SIZE" -> "7"))
      c.getMaximumPoolSize shouldBe 7
      c.getMinimumIdle shouldBe 0
      c.validate() // HikariCP's own checks keep both values (it resets ones it finds out of range)
      (c.getMaxLifetime, c.getIdleTimeout, c.getMinimumIdle) shouldBe (600000L, 300000L, 0)
    }
  }
}
