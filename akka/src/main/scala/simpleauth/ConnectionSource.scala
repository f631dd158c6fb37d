package simpleauth

import com.zaxxer.hikari.HikariDataSource
import java.util.Properties
import java.util.concurrent.atomic.AtomicReference
import scala.util.control.NonFatal

/**
 * The HikariCP pool, renewable. HikariCP reconnects by itself, but while the database is gone its
 * connection adder backs off up to 5 s between attempts (hard-coded), so recovery could lag the database by
 * seconds. Once a plain connection outside the pool succeeds again ([[reachable]]), the pool is replaced by a
 * fresh one, which fills at once ([[renew]]), and the old one, whose connections died with the database, is
 * closed in the background.
 */
final class ConnectionSource(settings: Settings, newPool: Settings => HikariDataSource = JdbcDatabase.dataSource) {
  private val current = new AtomicReference[HikariDataSource](newPool(settings))
  private val driver = new org.postgresql.Driver()

  def pool: HikariDataSource = current.get()

  /** Whether a plain connection (not from the pool) opens and is valid within about the acquire timeout. */
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

  /** Replaces the pool by a fresh one; the old one is closed on a background thread. */
  def renew(): Unit = {
    val old = current.getAndSet(newPool(settings))
    val closer = new Thread(() => old.close(), "simple-auth-pool-closer")
    closer.setDaemon(true)
    closer.start()
  }

  def close(): Unit = current.get().close()
}
