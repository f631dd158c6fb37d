package simpleauth

import com.zaxxer.hikari.{HikariConfig, HikariDataSource}
import java.sql.{Connection, SQLException, SQLNonTransientConnectionException, SQLTransientConnectionException}
import java.util.UUID
import java.util.Properties
import java.util.concurrent.atomic.{AtomicBoolean, AtomicInteger, AtomicReference}
import scala.util.control.NonFatal
import scala.concurrent.{ExecutionContext, Future}

/** The database could not be reached, or no pooled connection came in time: 503. */
final class DatabaseUnavailable(cause: Throwable) extends RuntimeException("database unavailable", cause)

/** Reads the users the token service authenticates. */
trait UserRepository {
  def findByEmail(email: String): Future[Option[User]]
  /** `SELECT 1` on a pooled connection. */
  def ping(): Future[Unit]
}

object JdbcUserRepository {
  /** The one query, identical in every stack. */
  val FindByEmailSql = "SELECT id, username, name, email, password_hash FROM users WHERE email = lower(?)"

  def dataSource(settings: Settings): HikariDataSource = {
    val config = new HikariConfig()
    config.setPoolName("simple-auth")
    config.setJdbcUrl(settings.database.jdbcUrl)
    settings.database.user.foreach(config.setUsername)
    settings.database.password.foreach(config.setPassword)
    settings.database.tls.foreach(config.addDataSourceProperty(_, _))
    config.setMaximumPoolSize(settings.dbPoolSize)
    config.setMinimumIdle(settings.dbPoolSize) // fixed-size pool: no connect on the hot path
    config.setConnectionTimeout(settings.dbAcquireTimeoutMs)
    config.setValidationTimeout(math.max(250L, math.min(settings.dbAcquireTimeoutMs, 1000L)))
    config.setInitializationFailTimeout(-1) // start while the database is down
    config.setAutoCommit(true)
    // Server-side prepared statement from the first execution, cached per connection.
    config.addDataSourceProperty("prepareThreshold", "1")
    config.addDataSourceProperty("preparedStatementCacheQueries", "16")
    config.addDataSourceProperty("connectTimeout", "5")
    config.addDataSourceProperty("socketTimeout", "30")
    config.addDataSourceProperty("tcpKeepAlive", "true")
    config.addDataSourceProperty("ApplicationName", "simple-auth-akka")
    new HikariDataSource(config)
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
 * The HikariCP pool, renewable. HikariCP reconnects by itself, but while the
 * database is gone its connection-adder backs off up to 5 s between attempts
 * (hard-coded), so recovery could lag the database by seconds. Once a plain
 * connection outside the pool succeeds again, the pool is replaced by a fresh one
 * (which fills at once) and the old one, whose connections died with the
 * database, is closed in the background.
 */
final class ConnectionSource(settings: Settings) {
  private val current = new AtomicReference[HikariDataSource](JdbcUserRepository.dataSource(settings))
  private val driver = new org.postgresql.Driver()

  def pool: HikariDataSource = current.get()

  def reachable(): Boolean = {
    val props = new Properties()
    settings.database.user.foreach(props.setProperty("user", _))
    settings.database.password.foreach(props.setProperty("password", _))
    settings.database.tls.foreach(props.setProperty(_, _))
    val seconds = math.max(1L, (settings.dbAcquireTimeoutMs + 999) / 1000).toString
    props.setProperty("connectTimeout", seconds)
    props.setProperty("loginTimeout", seconds)
    props.setProperty("socketTimeout", seconds)
    try {
      val conn = driver.connect(settings.database.jdbcUrl, props)
      try conn != null && conn.isValid(1) finally if (conn != null) conn.close()
    } catch { case NonFatal(_) => false }
  }

  def renew(): Unit = {
    val old = current.getAndSet(JdbcUserRepository.dataSource(settings))
    val closer = new Thread(() => old.close(), "simple-auth-pool-closer")
    closer.setDaemon(true)
    closer.start()
  }

  def close(): Unit = current.get().close()
}

/**
 * JDBC through HikariCP. Every call blocks, so it runs on `blockingEc`, the
 * dedicated database dispatcher sized to the pool — never on akka's default dispatcher.
 *
 * Because that dispatcher has one thread per connection, requests queue in front
 * of it when the database is slow or gone. Two rules keep every answer within
 * about DB_ACQUIRE_TIMEOUT_MS even then:
 *  - a call that already waited the acquire timeout for a thread answers 503 at once;
 *  - once a connection attempt has failed, only one call at a time tries the
 *    database again (and the pool reconnects through it); the others answer 503
 *    immediately instead of each blocking for the full timeout. That one call
 *    first tries a plain connection; when it succeeds the pool is renewed
 *    (see ConnectionSource) and the gate reopens.
 */
final class JdbcUserRepository(source: ConnectionSource, acquireTimeoutMs: Long)(using blockingEc: ExecutionContext)
    extends UserRepository {
  import JdbcUserRepository.*

  private val down = new AtomicBoolean(false)
  private val trialRunning = new AtomicBoolean(false)
  /** Calls submitted to the database dispatcher that have not started yet (waiting for a thread, so a connection). */
  private val queued = new AtomicInteger(0)

  /**
   * The pool gauges: HikariCP's counts; `pending` is every caller waiting for a connection, those still
   * queued for a database thread (one per connection) and those waiting inside HikariCP.
   */
  val poolStatistics: PoolStatistics = new PoolStatistics {
    private def mx = source.pool.getHikariPoolMXBean
    def active: Int = Option(mx).fold(0)(_.getActiveConnections)
    def idle: Int = Option(mx).fold(0)(_.getIdleConnections)
    def pending: Int = queued.get() + Option(mx).fold(0)(_.getThreadsAwaitingConnection)
    def max: Int = source.pool.getMaximumPoolSize
  }

  override def findByEmail(email: String): Future[Option[User]] = {
    val submitted = System.nanoTime()
    queued.incrementAndGet()
    Future {
      withConnection(submitted) { conn =>
        val st = conn.prepareStatement(FindByEmailSql)
        try {
          st.setString(1, email)
          val rs = st.executeQuery()
          try
            if (rs.next())
              Some(User(rs.getObject(1, classOf[UUID]), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5)))
            else None
          finally rs.close()
        } finally st.close()
      }
    }
  }

  override def ping(): Future[Unit] = {
    val submitted = System.nanoTime()
    queued.incrementAndGet()
    Future {
      withConnection(submitted) { conn =>
        val st = conn.createStatement()
        try {
          st.setQueryTimeout(1)
          val rs = st.executeQuery("SELECT 1")
          try { rs.next(); () } finally rs.close()
        } finally st.close()
      }
    }
  }

  private def withConnection[A](submittedNanos: Long)(body: Connection => A): A = {
    queued.decrementAndGet()
    if ((System.nanoTime() - submittedNanos) / 1000000L >= acquireTimeoutMs)
      throw new DatabaseUnavailable(new SQLTransientConnectionException("no database thread free within the acquire timeout"))
    val trial = down.get()
    if (trial && !trialRunning.compareAndSet(false, true))
      throw new DatabaseUnavailable(new SQLTransientConnectionException("database unreachable; a reconnection attempt is under way"))
    try {
      val result =
        try {
          if (trial) {
            if (!source.reachable())
              throw new SQLTransientConnectionException("database unreachable", "08001")
            source.renew()
          }
          val conn = source.pool.getConnection()
          try body(conn) finally conn.close()
        } catch { case e: SQLException if isUnavailable(e) => throw new DatabaseUnavailable(e) }
      down.set(false)
      result
    } catch {
      case e: DatabaseUnavailable =>
        down.set(true)
        throw e
    } finally if (trial) trialRunning.set(false)
  }
}
