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

object UserRepository:
  val Query = "SELECT id, username, name, email, password_hash FROM users WHERE email = lower(?)"

  def findByEmail(email: String): ZIO[UserRepository, DatabaseUnavailable, Option[User]] =
    ZIO.serviceWithZIO[UserRepository](_.findByEmail(email))

  /** HikariCP pool, opened with the layer and closed when the layer's scope ends (after the server stopped). */
  val live: ZLayer[AppConfig, AppConfig.StartupError, UserRepository] = ZLayer.scoped {
    for
      cfg <- ZIO.service[AppConfig]
      ds <- ZIO.acquireRelease(
              ZIO.attemptBlocking(dataSource(cfg)).mapError(e => AppConfig.StartupError(s"cannot set up the database pool: ${e.getMessage}"))
            )(ds => ZIO.attemptBlocking(ds.close()).orDie)
    yield Live(ds)
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
    new HikariDataSource(hc)

  final case class Live(ds: HikariDataSource) extends UserRepository:
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

    private def withConnection[A](f: Connection => A): IO[DatabaseUnavailable, A] =
      ZIO
        .attemptBlocking {
          val c = ds.getConnection()
          try f(c)
          finally c.close()
        }
        .refineOrDie { case e: SQLException if isUnavailable(e) => DatabaseUnavailable(e) }
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
