package simpleauth

import zio.*

/** What the pool gauges show. `pending`: callers waiting for a connection. */
final case class PoolState(active: Int, idle: Int, pending: Int, max: Int)

/** How the database is doing: readiness for `GET /health`, the pool's state for `GET /metrics`. */
trait DatabaseHealth:
  /** `SELECT 1` on a pooled connection within 1 s. */
  def isUp: UIO[Boolean]
  /** The pool's connections by state and its waiters. */
  def poolState: UIO[PoolState]

object DatabaseHealth:
  val live: URLayer[Database, DatabaseHealth] = ZLayer.fromFunction(Live(_))

  final case class Live(db: Database) extends DatabaseHealth:
    def isUp: UIO[Boolean] =
      db.withConnection { c =>
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

    def poolState: UIO[PoolState] = db.poolState
