package simpleauth

import java.sql.SQLException

import scala.util.{Failure, Try}

import zio.*
import zio.test.*

/** The pool against a database that is not there (port 1 refuses at once); the recovery is the conformance suite's. */
object RenewablePoolSpec extends ZIOSpecDefault:
  private val away = RoutesSpec.testConfig.copy(
    database = DatabaseSettings("jdbc:postgresql://127.0.0.1:1/auth", Some("auth"), Some("auth")),
    dbAcquireTimeoutMs = 2000
  )

  private def timed[A](f: => A): (Try[A], Long) =
    val t0 = java.lang.System.nanoTime()
    val result = Try(f)
    (result, (java.lang.System.nanoTime() - t0) / 1_000_000)

  def spec = suite("RenewablePool")(
    test("the first borrow waits out the acquire timeout; while the database stays away later ones fail at once") {
      ZIO.attemptBlocking {
        val pool = RenewablePool(away)
        try (timed(pool.getConnection()), timed(pool.getConnection()), timed(pool.getConnection()))
        finally pool.close()
      }.map { case ((first, firstMs), (second, secondMs), (third, thirdMs)) =>
        def unavailable(t: Try[?]) = t match
          case Failure(e: SQLException) => RenewablePool.isUnavailable(e)
          case _                        => false
        assertTrue(
          unavailable(first), firstMs >= 2000,
          unavailable(second), secondMs < 1000,
          unavailable(third), thirdMs < 1000
        )
      }
    },
    test("connections are retired by DB_MAX_LIFETIME_SECONDS and DB_IDLE_TIMEOUT_SECONDS; the pool may shrink to none") {
      val defaults = RenewablePool.config(away)
      val set      = RenewablePool.config(away.copy(dbPoolSize = 7, dbMaxLifetimeSeconds = 45, dbIdleTimeoutSeconds = 12))
      set.validate() // HikariCP's own checks keep the values (it resets ones it finds out of range)
      assertTrue(
        defaults.getMaxLifetime == 600_000L, defaults.getIdleTimeout == 300_000L,
        set.getMaxLifetime == 45_000L, set.getIdleTimeout == 12_000L,
        // HikariCP retires idle connections only down to minimumIdle.
        set.getMinimumIdle == 0, set.getMaximumPoolSize == 7
      )
    },
    test("connection-level failures are 503s, anything else is a 500") {
      assertTrue(
        RenewablePool.isUnavailable(new java.sql.SQLTransientConnectionException("timeout")),
        RenewablePool.isUnavailable(new SQLException("refused", "08001")),
        RenewablePool.isUnavailable(new SQLException("too many connections", "53300")),
        RenewablePool.isUnavailable(new SQLException("admin shutdown", "57P01")),
        !RenewablePool.isUnavailable(new SQLException("no such table", "42P01"))
      )
    },
    test("a borrow that timed out with no connection failure behind it is a busy pool, not an outage") {
      val refused = new SQLException("Connection refused", "08001")
      assertTrue(
        RenewablePool.isBusy(new java.sql.SQLTransientConnectionException("Connection is not available, request timed out after 1000ms")),
        !RenewablePool.isBusy(new java.sql.SQLTransientConnectionException("Connection is not available", "08001", refused)),
        !RenewablePool.isBusy(refused)
      )
    }
  ) @@ TestAspect.withLiveClock
