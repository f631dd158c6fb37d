package simpleauth

import com.zaxxer.hikari.HikariDataSource
import org.scalatest.concurrent.Eventually
import org.scalatest.matchers.should.Matchers
import org.scalatest.time.{Seconds, Span}
import org.scalatest.wordspec.AnyWordSpec

class ConnectionSourceSpec extends AnyWordSpec with Matchers with Eventually {
  override implicit val patienceConfig: PatienceConfig = PatienceConfig(Span(10, Seconds))

  /** Nothing listens on port 1: connections are refused at once. */
  private val settings = Settings.fromEnv(Map(
    "DATABASE_URL" -> "postgres://auth:auth@127.0.0.1:1/auth",
    "DB_ACQUIRE_TIMEOUT_MS" -> "250",
    "JWT_PRIVATE_KEY_FILE" -> Vectors.specDir.resolve("keys/dev-rsa-2048.pem").toString
  )).fold(e => fail(e.message), identity)

  "ConnectionSource" should {
    "find an unreachable database unreachable, within about the acquire timeout" in {
      val source = new ConnectionSource(settings, _ => new HikariDataSource()) // a pool that never connects
      try {
        val start = System.nanoTime()
        source.reachable() shouldBe false
        (System.nanoTime() - start) / 1e9 should be < 5.0
      } finally source.close()
    }

    "replace the pool on renewal and close the old one in the background" in {
      val source = new ConnectionSource(settings, _ => new HikariDataSource())
      try {
        val old = source.pool
        source.renew()
        source.pool should not be theSameInstanceAs(old)
        source.pool.isClosed shouldBe false
        eventually { old.isClosed shouldBe true }
      } finally source.close()
    }
  }
}
