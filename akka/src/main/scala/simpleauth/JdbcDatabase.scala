package simpleauth

import com.zaxxer.hikari.{HikariConfig, HikariDataSource}
import java.sql.{Connection, SQLException, SQLNonTransientConnectionException, SQLTransientConnectionException}
import scala.concurrent.{ExecutionContext, Future, Promise}
import scala.util.Try

object JdbcDatabase {
  def dataSource(settings: Settings): HikariDataSource = new HikariDataSource(config(settings))

  /**
   * The pool's configuration. Connections are retired by age (`DB_MAX_LIFETIME_SECONDS`: HikariCP closes one that
   * is older when it is returned or found idle, never in the middle of a query, and opens a new one on demand) and by
   * idleness (`DB_IDLE_TIMEOUT_SECONDS`); HikariCP retires idle connections only down to `minimumIdle`, so that is 0
   * (the pool may shrink to none while idle, contract §5) and `DB_POOL_SIZE` is its maximum.
   */
  def config(settings: Settings): HikariConfig = {
    val config = new HikariConfig()
    config.setPoolName("simple-auth")
    config.setJdbcUrl(settings.database.jdbcUrl)
    settings.database.user.foreach(config.setUsername)
    settings.database.password.foreach(config.setPassword)
    settings.database.tls.foreach(config.addDataSourceProperty(_, _))
    config.setMaximumPoolSize(settings.dbPoolSize)
    config.setMinimumIdle(0)
    config.setMaxLifetime(settings.dbMaxLifetimeSeconds * 1000)
    config.setIdleTimeout(settings.dbIdleTimeoutSeconds * 1000)
    config.setConnectionTimeout(settings.dbAcquireTimeoutMs)
    config.setValidationTimeout(math.max(250L, math.min(settings.dbAcquireTimeoutMs, 1000L)))
    config.setInitializationFailTimeout(-1) // start while the database is down
    config.setAutoCommit(true) // every statement of §7 is one statement, so its own transaction
    // Server-side prepared statements from the first execution, cached per connection.
    config.addDataSourceProperty("prepareThreshold", "1")
    config.addDataSourceProperty("preparedStatementCacheQueries", "16")
    config.addDataSourceProperty("connectTimeout", "5")
    config.addDataSourceProperty("socketTimeout", "30")
    config.addDataSourceProperty("tcpKeepAlive", "true")
    config.addDataSourceProperty("ApplicationName", "simple-auth-akka")
    config
  }

  /** True on a database thread while a call and what its result runs in the same thread (`parasitic` steps) are running. */
  private val onDatabaseThread: ThreadLocal[java.lang.Boolean] = ThreadLocal.withInitial(() => java.lang.Boolean.FALSE)

  /**
   * A borrow that timed out with every connection (or database thread) in use and no failed connection attempt behind
   * it (HikariCP gives its timeout the last connection failure as cause and SQL state, if there was one): overload, not
   * an outage.
   */
  def isBusy(e: Throwable): Boolean = e match {
    case t: SQLTransientConnectionException => t.getCause == null && t.getSQLState == null
    case _ => false
  }

  /** Connection-level failures (class 08, shutdown) mean "unavailable", not "bug". */
  def isUnavailable(e: Throwable): Boolean = e match {
    case _: SQLTransientConnectionException | _: SQLNonTransientConnectionException => true
    case s: SQLException =>
      val state = Option(s.getSQLState).getOrElse("")
      state.startsWith("08") || state == "57P01" || state == "57P02" || state == "57P03"
    case _ => false
  }
}

/**
 * JDBC through HikariCP, shared by the repositories. Every call blocks, so it runs on `blockingEc`, the
 * dedicated database dispatcher sized to the pool, never on akka's default dispatcher; [[OutageGate]] bounds how
 * long calls queue for it. A trial call (the first after an outage) opens a plain connection first and renews
 * the pool when it succeeds ([[ConnectionSource]]).
 */
final class JdbcDatabase(source: ConnectionSource, acquireTimeoutMs: Long)(using blockingEc: ExecutionContext) {
  import JdbcDatabase.*

  private val gate = new OutageGate(acquireTimeoutMs)

  /**
   * The pool gauges: HikariCP's counts; `pending` is every caller waiting for a connection, those still
   * queued for a database thread (one per connection) and those waiting inside HikariCP.
   */
  val poolStatistics: PoolStatistics = new PoolStatistics {
    private def mx = source.pool.getHikariPoolMXBean
    def active: Int = Option(mx).fold(0)(_.getActiveConnections)
    def idle: Int = Option(mx).fold(0)(_.getIdleConnections)
    def pending: Int = gate.waiting + Option(mx).fold(0)(_.getThreadsAwaitingConnection)
    def max: Int = source.pool.getMaximumPoolSize
  }

  /**
   * `body` with a pooled connection, on the database dispatcher; fails with [[DatabaseUnavailable]] in an outage.
   *
   * A call made on a database thread — by a step that continues there after a statement (the session after the
   * login's lookup) — runs at once on that thread: it may block, and the previous call's connection is back in the
   * pool, so queueing the statement for another database thread would only cost a hand-off.
   */
  def call[A](body: Connection => A): Future[A] = {
    val submitted = gate.enter()
    if (onDatabaseThread.get) Future.fromTry(Try(attempt(submitted, body)))
    else {
      val result = Promise[A]()
      blockingEc.execute { () =>
        onDatabaseThread.set(java.lang.Boolean.TRUE)
        try result.complete(Try(attempt(submitted, body))) // the steps waiting on it run here, in this call
        catch { case fatal: Throwable => result.tryFailure(fatal); throw fatal }
        finally onDatabaseThread.set(java.lang.Boolean.FALSE)
      }
      result.future
    }
  }

  private def attempt[A](submitted: Long, body: Connection => A): A =
    gate.run(submitted) { trial =>
      try {
        if (trial) {
          if (!source.reachable()) throw new SQLTransientConnectionException("database unreachable", "08001")
          source.renew()
        }
        val conn = source.pool.getConnection()
        try body(conn) finally conn.close()
      } catch { case e: SQLException if isUnavailable(e) => throw new DatabaseUnavailable(e) }
    }
}
