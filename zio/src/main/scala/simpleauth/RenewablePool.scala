package simpleauth

import java.sql.{Connection, SQLException, SQLTransientConnectionException}

import com.zaxxer.hikari.{HikariConfig, HikariDataSource}

/**
 * The HikariCP pool, renewable. HikariCP reconnects by itself, but while the database is away its connection adder
 * backs off, doubling up to 5 s between attempts (hard-coded), so after a 5 s outage service could come back up to
 * 5 s after the database did. Once a borrow has failed for lack of a database, the first caller at most every
 * 200 ms opens a plain connection outside the pool; when that succeeds, the pool is replaced by a fresh one (which
 * connects at once) and the old one, whose connections died with the database, is closed in the background. The
 * akka and Spring stacks do the same. Until then, other borrowers get a 503 at once, as in the akka stack.
 * Every method blocks: callers are on `Database`'s JDBC threads or inside `ZIO.attemptBlocking`.
 */
final class RenewablePool(cfg: Settings):
  import RenewablePool.{dataSource, isBusy, isUnavailable}

  private val current  = new java.util.concurrent.atomic.AtomicReference[HikariDataSource](dataSource(cfg))
  private val outage   = new java.util.concurrent.atomic.AtomicBoolean(false)
  private val probing  = new java.util.concurrent.atomic.AtomicBoolean(false)
  @volatile private var nextProbe = 0L
  private val ProbeIntervalNanos = 200_000_000L

  def getConnection(): Connection =
    if outage.get() then
      renewIfDatabaseIsBack()
      // Still away: answer at once rather than wait out the acquire timeout on a pool with no connections (one
      // caller at a time probes, above). Waiting would also stack on the time spent for a permit (`Database`).
      if outage.get() then throw new SQLTransientConnectionException("database unreachable; probing for its return", "08001")
    val pool = current.get()
    try pool.getConnection()
    catch
      case e: SQLException if isUnavailable(e) =>
        // Not for waiters of a pool just replaced, nor when the pool was only busy: the database is up.
        if !isBusy(e) && (current.get() eq pool) then outage.set(true)
        throw e

  private def renewIfDatabaseIsBack(): Unit =
    val now = java.lang.System.nanoTime()
    if now - nextProbe >= 0 && probing.compareAndSet(false, true) then
      try
        nextProbe = now + ProbeIntervalNanos
        if outage.get() && reachable() then
          val old = current.getAndSet(dataSource(cfg))
          outage.set(false)
          Thread.ofPlatform().daemon().name("simple-auth-pool-closer").start(() => old.close())
      finally probing.set(false)

  /** Connection properties of the probe, with every timeout at the acquire timeout (whole seconds, at least 1). */
  private val probeProperties =
    val props = new java.util.Properties()
    cfg.database.user.foreach(props.setProperty("user", _))
    cfg.database.password.foreach(props.setProperty("password", _))
    val seconds = math.max(1L, (cfg.dbAcquireTimeoutMs + 999) / 1000).toString
    props.setProperty("connectTimeout", seconds)
    props.setProperty("loginTimeout", seconds)
    props.setProperty("socketTimeout", seconds)
    cfg.database.tls.foreach((k, v) => props.setProperty(k, v)) // the same TLS settings as the pool
    props

  private def reachable(): Boolean =
    try
      val c = java.sql.DriverManager.getDriver(cfg.database.jdbcUrl).connect(cfg.database.jdbcUrl, probeProperties)
      try c != null && c.isValid(1)
      finally if c != null then c.close()
    catch case _: SQLException | _: RuntimeException => false

  def close(): Unit = current.get().close()

  /** Active and idle connections of the current pool, and the threads waiting inside its borrow. */
  def counts: (Int, Int, Int) =
    Option(current.get().getHikariPoolMXBean) match
      case Some(mx) => (mx.getActiveConnections, mx.getIdleConnections, mx.getThreadsAwaitingConnection)
      case None     => (0, 0, 0)

object RenewablePool:
  /** Connection-level failures (503); anything else (bad SQL, missing table) is a defect (500). */
  def isUnavailable(e: SQLException): Boolean =
    val state = Option(e.getSQLState).getOrElse("")
    e.isInstanceOf[SQLTransientConnectionException] ||
    state.startsWith("08") || state.startsWith("53") || state.startsWith("57P") ||
    Option(e.getCause).exists(_.isInstanceOf[java.io.IOException]) ||
    (state.isEmpty && poolClosed(e))

  /**
   * A borrow that timed out with every connection in use and no failed connection attempt behind it (HikariCP gives its
   * timeout the last connection failure as its cause, if there was one): overload, not an outage.
   */
  def isBusy(e: SQLException): Boolean =
    e.isInstanceOf[SQLTransientConnectionException] && e.getCause == null && e.getSQLState == null

  /** HikariDataSource after close(): only during shutdown. */
  private def poolClosed(e: SQLException): Boolean = Option(e.getMessage).exists(_.contains("has been closed"))

  def dataSource(cfg: Settings): HikariDataSource = new HikariDataSource(config(cfg))

  /**
   * The pool's configuration. Connections are retired by age (`DB_MAX_LIFETIME_SECONDS`: HikariCP closes one that
   * is older when it is returned or found idle, never in the middle of a query, and opens a new one on demand) and by
   * idleness (`DB_IDLE_TIMEOUT_SECONDS`); HikariCP retires idle connections only down to `minimumIdle`, so that is 0
   * (the pool may shrink to none while idle, contract §5) and `DB_POOL_SIZE` is its maximum.
   */
  def config(cfg: Settings): HikariConfig =
    val hc = new HikariConfig()
    hc.setPoolName("simple-auth")
    hc.setJdbcUrl(cfg.database.jdbcUrl)
    cfg.database.user.foreach(hc.setUsername)
    cfg.database.password.foreach(hc.setPassword)
    hc.setMaximumPoolSize(cfg.dbPoolSize)
    hc.setMinimumIdle(0)
    hc.setMaxLifetime(cfg.dbMaxLifetimeSeconds * 1000)
    hc.setIdleTimeout(cfg.dbIdleTimeoutSeconds * 1000)
    hc.setConnectionTimeout(math.max(250L, cfg.dbAcquireTimeoutMs)) // Hikari's floor is 250 ms
    hc.setValidationTimeout(math.max(250L, math.min(1000L, cfg.dbAcquireTimeoutMs)))
    hc.setInitializationFailTimeout(-1)                    // start even while the database is down
    hc.setAutoCommit(true)                                 // every statement of §7 is one statement, atomic alone
    hc.addDataSourceProperty("connectTimeout", "5")       // seconds; a dead host must not hang a pool thread forever
    hc.addDataSourceProperty("socketTimeout", "30")
    hc.addDataSourceProperty("tcpKeepAlive", "true")
    hc.addDataSourceProperty("ApplicationName", "simple-auth-zio")
    cfg.database.tls.foreach((k, v) => hc.addDataSourceProperty(k, v)) // sslmode, sslrootcert, sslfactory
    hc
