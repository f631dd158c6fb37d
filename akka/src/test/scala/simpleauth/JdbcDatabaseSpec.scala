package simpleauth

import com.zaxxer.hikari.HikariDataSource
import java.lang.reflect.Proxy
import java.sql.Connection
import java.util.concurrent.{Executors, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import scala.concurrent.{Await, ExecutionContext}
import scala.concurrent.duration.*

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

  "JdbcDatabase.call" should {
    /** A pool whose connections do nothing: `call` is exercised without a database. */
    def fakePool(): HikariDataSource = new HikariDataSource() {
      override def getConnection: Connection =
        Proxy.newProxyInstance(getClass.getClassLoader, Array(classOf[Connection]), (_, method, _) =>
          if (method.getName == "close") null else throw new UnsupportedOperationException(method.getName)
        ).asInstanceOf[Connection]
    }

    "run a call made on a database thread right there, and queue one made elsewhere" in {
      val pool = Executors.newFixedThreadPool(2)
      val submitted = new AtomicInteger(0)
      val dbEc = new ExecutionContext {
        def execute(task: Runnable): Unit = { submitted.incrementAndGet(); pool.execute(task) }
        def reportFailure(cause: Throwable): Unit = ()
      }
      val source = new ConnectionSource(settings(), _ => fakePool())
      try {
        val db = new JdbcDatabase(source, 1000)(using dbEc)
        val caller = Thread.currentThread()
        // A step after a statement (as TokenService's are: parasitic) makes the next call on the same thread.
        val threads = db.call(_ => Thread.currentThread())
          .flatMap(first => db.call(_ => (first, Thread.currentThread())))(using ExecutionContext.parasitic)
        val (first, second) = Await.result(threads, 10.seconds)
        second shouldBe theSameInstanceAs(first)
        first should not be theSameInstanceAs(caller)
        submitted.get shouldBe 1
        // A call made outside a call's steps (here the test's thread) is queued for a database thread.
        Await.result(db.call(_ => ()), 10.seconds)
        submitted.get shouldBe 2
      } finally {
        source.close()
        pool.shutdown()
        pool.awaitTermination(10, TimeUnit.SECONDS)
      }
    }
  }
}
