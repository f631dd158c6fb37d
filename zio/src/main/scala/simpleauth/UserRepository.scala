package simpleauth

import java.sql.{Connection, SQLException, SQLTransientConnectionException}
import java.util.UUID

import com.zaxxer.hikari.{HikariConfig, HikariDataSource}
import zio.*

/** The database is unreachable or no pooled connection came within DB_ACQUIRE_TIMEOUT_MS. */
final case class DatabaseUnavailable(cause: Throwable)

/** Reads the channel API's `users` table. */
trait UserRepository:
  def findByEmail(email: String): IO[DatabaseUnavailable, Option[User]]
  /** `SELECT 1` on a pooled connection within 1 s. */
  def healthy: UIO[Boolean]
  /** The pool's connections by state and its waiters, for the metrics. */
  def poolState: UIO[PoolState]

object UserRepository:
  val Query = "SELECT id, username, name, email, password_hash FROM users WHERE email = lower(?)"

  def findByEmail(email: String): ZIO[UserRepository, DatabaseUnavailable, Option[User]] =
    ZIO.serviceWithZIO[UserRepository](_.findByEmail(email))

  /** HikariCP pool, opened with the layer and closed when the layer's scope ends (after the server stopped). */
  val live: ZLayer[AppConfig, AppConfig.StartupError, UserRepository] = ZLayer.scoped {
    for
      cfg <- ZIO.service[AppConfig]
      ds <- ZIO.acquireRelease(
              ZIO.attemptBlocking(new RenewablePool(cfg)).mapError(e => AppConfig.StartupError(s"cannot set up the database pool: ${e.getMessage}"))
            )(ds => ZIO.attemptBlocking(ds.close()).orDie)
      gate <- Semaphore.make(cfg.poolSize.toLong)
    yield Live(ds, gate, cfg.acquireTimeoutMs.millis, cfg.poolSize)
  }

  /** Connection-level failures (503); anything else (bad SQL, missing table) is a defect (500). */
  def isUnavailable(e: SQLException): Boolean =
    val state = Option(e.getSQLState).getOrElse("")
    e.isInstanceOf[SQLTransientConnectionException] ||
    state.startsWith("08") || state.startsWith("53") || state.startsWith("57P") ||
    Option(e.getCause).exists(_.isInstanceOf[java.io.IOException]) ||
    (state.isEmpty && poolClosed(e))

  /** HikariDataSource after close(): only during shutdown. */
  private def poolClosed(e: SQLException): Boolean = Option(e.getMessage).exists(_.contains("has been closed"))

  def dataSource(cfg: AppConfig): HikariDataSource =
    val hc = new HikariConfig()
    hc.setPoolName("simple-auth")
    hc.setJdbcUrl(cfg.database.url)
    cfg.database.user.foreach(hc.setUsername)
    cfg.database.password.foreach(hc.setPassword)
    hc.setMaximumPoolSize(cfg.poolSize)
    hc.setMinimumIdle(cfg.poolSize)                        // fixed-size pool, as in every stack
    hc.setConnectionTimeout(math.max(250L, cfg.acquireTimeoutMs)) // Hikari's floor is 250 ms
    hc.setValidationTimeout(math.max(250L, math.min(1000L, cfg.acquireTimeoutMs)))
    hc.setInitializationFailTimeout(-1)                    // start even while the database is down
    hc.setAutoCommit(true)
    hc.setReadOnly(true)
    hc.addDataSourceProperty("connectTimeout", "5")       // seconds; a dead host must not hang a pool thread forever
    hc.addDataSourceProperty("socketTimeout", "30")
    hc.addDataSourceProperty("tcpKeepAlive", "true")
    hc.addDataSourceProperty("ApplicationName", "simple-auth-zio")
    cfg.database.properties.foreach((k, v) => hc.addDataSourceProperty(k, v)) // sslmode, sslrootcert, sslfactory
    new HikariDataSource(hc)

  /**
   * The HikariCP pool, renewable. HikariCP reconnects by itself, but while the database is away its connection adder
   * backs off, doubling up to 5 s between attempts (hard-coded), so after a 5 s outage service could come back up to
   * 5 s after the database did. Once a borrow has failed for lack of a database, the first caller at most every
   * 200 ms opens a plain connection outside the pool; when that succeeds, the pool is replaced by a fresh one (which
   * connects at once) and the old one, whose connections died with the database, is closed in the background. The
   * akka and Spring stacks do the same. Until then, other borrowers get a 503 at once, as in the akka stack.
   * Every method blocks: callers are inside `ZIO.attemptBlocking`.
   */
  final class RenewablePool(cfg: AppConfig):
    private val current  = new java.util.concurrent.atomic.AtomicReference[HikariDataSource](dataSource(cfg))
    private val outage   = new java.util.concurrent.atomic.AtomicBoolean(false)
    private val probing  = new java.util.concurrent.atomic.AtomicBoolean(false)
    @volatile private var nextProbe = 0L
    private val ProbeIntervalNanos = 200_000_000L

    def getConnection(): Connection =
      if outage.get() then
        renewIfDatabaseIsBack()
        // Still away: answer at once rather than wait out the acquire timeout on a pool with no connections (one
        // caller at a time probes, above). Waiting would also stack on the time spent for a permit (Live.gate).
        if outage.get() then throw new SQLTransientConnectionException("database unreachable; probing for its return", "08001")
      val pool = current.get()
      try pool.getConnection()
      catch
        case e: SQLException if isUnavailable(e) =>
          if current.get() eq pool then outage.set(true) // not for waiters of a pool just replaced
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
      val seconds = math.max(1L, (cfg.acquireTimeoutMs + 999) / 1000).toString
      props.setProperty("connectTimeout", seconds)
      props.setProperty("loginTimeout", seconds)
      props.setProperty("socketTimeout", seconds)
      cfg.database.properties.foreach((k, v) => props.setProperty(k, v)) // the same TLS settings as the pool
      props

    private def reachable(): Boolean =
      try
        val c = java.sql.DriverManager.getDriver(cfg.database.url).connect(cfg.database.url, probeProperties)
        try c != null && c.isValid(1)
        finally if c != null then c.close()
      catch case _: SQLException | _: RuntimeException => false

    def close(): Unit = current.get().close()

    /** Active and idle connections of the current pool, and the threads waiting inside its borrow. */
    def counts: (Int, Int, Int) =
      Option(current.get().getHikariPoolMXBean) match
        case Some(mx) => (mx.getActiveConnections, mx.getIdleConnections, mx.getThreadsAwaitingConnection)
        case None     => (0, 0, 0)

  /**
   * @param gate one permit per pooled connection: at most DB_POOL_SIZE lookups are inside JDBC at a time, each on
   *             a thread of ZIO's blocking pool; the others wait as fibers, first come first served, for at most
   *             `acquireTimeout` (then 503). Left to HikariCP, every waiting request parked a blocking-pool thread
   *             inside its borrow, where a thread that has just given a connection back can take it again ahead
   *             of earlier waiters; under load a few requests waited hundreds of milliseconds (the benchmark saw a
   *             p99 of 5.7 × the median at 64 connections).
   */
  final case class Live(ds: RenewablePool, gate: Semaphore, acquireTimeout: Duration, maxSize: Int) extends UserRepository:
    /**
     * Outages are logged on their transitions (one WARN when one starts, one INFO when it ends), not per request,
     * and at most one WARN per 10 s, so a pool that flaps under load cannot flood the log.
     */
    private val down     = new java.util.concurrent.atomic.AtomicBoolean(false)
    private val warned   = new java.util.concurrent.atomic.AtomicBoolean(false)
    private val lastWarn = new java.util.concurrent.atomic.AtomicLong(0L)

    private def outage(e: DatabaseUnavailable): UIO[Unit] =
      ZIO.suspendSucceed {
        val now = java.lang.System.nanoTime()
        val last = lastWarn.get()
        if down.compareAndSet(false, true) && (last == 0L || now - last >= 10_000_000_000L) && lastWarn.compareAndSet(last, now) then
          warned.set(true)
          ZIO.logWarningCause("database unavailable; answering 503 until it is back", Cause.fail(e.cause))
        else ZIO.unit
      }

    private val recovered: UIO[Unit] =
      ZIO.suspendSucceed {
        if down.compareAndSet(true, false) && warned.getAndSet(false) then ZIO.logInfo("database available again")
        else ZIO.unit
      }

    private val noPermit =
      DatabaseUnavailable(new SQLTransientConnectionException("no database connection free within the acquire timeout"))

    /** Fibers waiting for a permit: the callers waiting for a connection (with Hikari's own waiters, `poolState`). */
    private val waiting = new java.util.concurrent.atomic.AtomicInteger(0)

    def poolState: UIO[PoolState] =
      ZIO.attemptBlocking(ds.counts).orElseSucceed((0, 0, 0)).map { (active, idle, inBorrow) =>
        PoolState(active, idle, waiting.get() + inBorrow, maxSize)
      }

    private def withConnection[A](f: Connection => A): IO[DatabaseUnavailable, A] =
      ZIO
        .scoped {
          (ZIO.succeed(waiting.incrementAndGet()) *>
            gate.withPermitScoped.timeoutFail(noPermit)(acquireTimeout).ensuring(ZIO.succeed(waiting.decrementAndGet()))) *>
            ZIO
              .attemptBlocking {
                val c = ds.getConnection()
                try f(c)
                finally c.close()
              }
              .refineOrDie { case e: SQLException if isUnavailable(e) => DatabaseUnavailable(e) }
        }
        .tapBoth(outage, _ => recovered)

    def findByEmail(email: String): IO[DatabaseUnavailable, Option[User]] =
      withConnection { c =>
        val ps = c.prepareStatement(Query)
        try
          ps.setString(1, email)
          val rs = ps.executeQuery()
          try
            if rs.next() then
              Some(
                User(
                  id = rs.getObject(1, classOf[UUID]),
                  username = rs.getString(2),
                  name = rs.getString(3),
                  email = rs.getString(4),
                  passwordHash = rs.getString(5)
                )
              )
            else None
          finally rs.close()
        finally ps.close()
      }

    def healthy: UIO[Boolean] =
      withConnection { c =>
        val st = c.createStatement()
        try
          st.setQueryTimeout(1)
          val rs = st.executeQuery("SELECT 1")
          try rs.next() && rs.getInt(1) == 1
          finally rs.close()
        finally st.close()
      }.disconnect
        .timeout(1.second)
        .map(_.getOrElse(false))
        .catchAll(_ => ZIO.succeed(false))
