package simpleauth

import java.sql.{Connection, SQLException, SQLTransientConnectionException}
import java.util.concurrent.{ExecutorService, Executors, ThreadFactory}
import java.util.concurrent.atomic.AtomicInteger

import zio.*

/** The database is unreachable or no pooled connection came within DB_ACQUIRE_TIMEOUT_MS. */
final case class DatabaseUnavailable(cause: Throwable)

/**
 * Pooled connections for `UserRepository` and `DatabaseHealth`: the renewable HikariCP pool behind a gate of one
 * permit per pooled connection, and `executor`, one thread per pooled connection, that JDBC runs on. At most
 * DB_POOL_SIZE callers are inside JDBC at a time; the others wait as fibers, first come first served, for at most
 * `acquireTimeout` (then 503). Left to HikariCP, every waiting request parked a blocking-pool thread inside its
 * borrow, where a thread that has just given a connection back can take it again ahead of earlier waiters (the
 * benchmark saw a p99 of 5.7 × the median at 64 connections).
 *
 * JDBC runs on `executor` rather than ZIO's blocking pool so that a flow locked to it (`TokenService`'s password
 * grant) runs its statements and the work between them on one thread: a call made there needs no shift. ZIO's
 * blocking pool grows a thread per waiting call and hands the fiber back to the default executor after each.
 */
final class Database(pool: RenewablePool, gate: Semaphore, acquireTimeout: Duration, maxSize: Int, outages: OutageLog, val executor: Executor):
  private val noPermit =
    DatabaseUnavailable(new SQLTransientConnectionException("no database connection free within the acquire timeout"))

  /** Fibers waiting for a permit: callers waiting for a connection (with Hikari's own waiters, `poolState`). */
  private val waiting = new AtomicInteger(0)

  def poolState: UIO[PoolState] =
    ZIO.attemptBlocking(pool.counts).orElseSucceed((0, 0, 0)).map { (active, idle, inBorrow) =>
      PoolState(active, idle, waiting.get() + inBorrow, maxSize)
    }

  /**
   * Runs `f` on a pooled connection on `executor`; connection-level failures are `DatabaseUnavailable`. A free permit
   * is taken at once; only a caller that finds none (or others already waiting: the gate stays first come first
   * served) waits, under the acquire timeout. The timeout is a race of two forked fibers and a timer, so it is paid
   * only where there is something to wait for, not on every statement.
   */
  def withConnection[A](f: Connection => A): IO[DatabaseUnavailable, A] =
    val call = ZIO
      .attempt {
        val c = pool.getConnection()
        try f(c)
        finally c.close()
      }
      .onExecutor(executor)
      .refineOrDie { case e: SQLException if RenewablePool.isUnavailable(e) => DatabaseUnavailable(e) }
    gate
      .tryWithPermit(call)
      .flatMap {
        case Some(a) => ZIO.succeed(a)
        case None    => queued(call)
      }
      .tapBoth(e => outages.failed(e.cause), _ => outages.recovered)

  private def queued[A](call: IO[DatabaseUnavailable, A]): IO[DatabaseUnavailable, A] =
    ZIO.scoped {
      (ZIO.succeed(waiting.incrementAndGet()) *>
        gate.withPermitScoped.timeoutFail(noPermit)(acquireTimeout).ensuring(ZIO.succeed(waiting.decrementAndGet()))) *>
        call
    }

/** The executor JDBC runs on (`Database.executor`), for the flows that lock themselves to it (`TokenService`). */
final case class JdbcExecutor(executor: Executor)

object JdbcExecutor:
  val live: URLayer[Database, JdbcExecutor] = ZLayer.fromFunction((db: Database) => JdbcExecutor(db.executor))

object Database:
  /**
   * The pool and the JDBC threads are opened with the layer and closed when the layer's scope ends (after the server
   * stopped).
   */
  val live: ZLayer[Settings, SettingsError, Database] = ZLayer.scoped {
    for
      cfg     <- ZIO.service[Settings]
      pool    <- ZIO.acquireRelease(
                   ZIO.attemptBlocking(new RenewablePool(cfg)).mapError(e => SettingsError(s"cannot set up the database pool: ${e.getMessage}"))
                 )(pool => ZIO.attemptBlocking(pool.close()).orDie)
      jdbc    <- jdbcExecutor(cfg.dbPoolSize)
      gate    <- Semaphore.make(cfg.dbPoolSize.toLong)
    yield Database(pool, gate, cfg.dbAcquireTimeoutMs.millis, cfg.dbPoolSize, OutageLog(), jdbc)
  }

  /** `size` daemon threads named `simple-auth-jdbc-N`, one per pooled connection, shut down when `Scope` closes. */
  def jdbcExecutor(size: Int): URIO[Scope, Executor] =
    ZIO.acquireRelease(ZIO.succeed(jdbcThreads(size)))(threads => ZIO.succeed(threads.shutdown())).map(Executor.fromJavaExecutor)

  private def jdbcThreads(size: Int): ExecutorService =
    val count = AtomicInteger(0)
    val named: ThreadFactory = (task: Runnable) =>
      val t = Thread(task, s"simple-auth-jdbc-${count.incrementAndGet()}")
      t.setDaemon(true)
      t
    Executors.newFixedThreadPool(size, named)
