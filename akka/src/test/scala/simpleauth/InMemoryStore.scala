package simpleauth

import java.sql.SQLTransientConnectionException
import java.time.Instant
import java.util.{HexFormat, UUID}
import scala.collection.mutable
import scala.concurrent.Future

/**
 * `users`, `login_failures` and `refresh_tokens` in memory, with the meaning of the statements of contract §7
 * (JdbcUserRepository, JdbcSessionRepository), for the route and service tests. `down` makes every call fail
 * the way an unreachable database does; `clock` can be moved.
 */
class InMemoryStore(
    initialUsers: Seq[User],
    maxFailures: Int = 1000000,
    windowSeconds: Int = 300,
    refreshTtlSeconds: Int = 86400
) extends UserRepository with SessionRepository {
  @volatile var down = false
  /** Failing only the statements that write (the failure count, a new session): the lookup still answers. */
  @volatile var writesDown = false
  @volatile var lookups = List.empty[String]
  /** Every call, answered or failed. */
  @volatile var calls = 0
  @volatile var clock: () => Instant = () => Instant.now()

  final case class Row(familyId: UUID, userId: UUID, clientId: String, expiresAt: Instant,
                       var usedAt: Option[Instant] = None, var revokedAt: Option[Instant] = None)

  private val users = mutable.Map.from(initialUsers.map(u => u.id -> u))
  private val failures = mutable.Map.empty[String, (Int, Instant)]
  val tokens: mutable.Map[String, Row] = mutable.Map.empty

  private def hex(hash: Array[Byte]) = HexFormat.of().formatHex(hash)
  private def unavailable[A]: Future[A] =
    Future.failed(new DatabaseUnavailable(new SQLTransientConnectionException("pool timeout")))
  private def answer[A](writes: Boolean)(body: => A): Future[A] = {
    synchronized(calls += 1)
    if (down || (writes && writesDown)) unavailable else Future.successful(synchronized(body))
  }

  def putUser(user: User): Unit = synchronized(users.update(user.id, user))
  def failureCount(username: String): Option[Int] = synchronized(failures.get(username.toLowerCase).map(_._1))
  def row(token: String): Option[Row] = synchronized(tokens.get(hex(RefreshToken.hash(token))))

  override def findForLogin(username: String): Future[LoginLookup] =
    answer(writes = false) {
      lookups = username :: lookups
      val login = username.toLowerCase
      val now = clock()
      val window = failures.get(login).filter(_._2.plusSeconds(windowSeconds).isAfter(now))
      val lockedFor = window.collect {
        case (count, start) if count >= maxFailures =>
          math.ceil((start.plusSeconds(windowSeconds).toEpochMilli - now.toEpochMilli) / 1000.0).toInt
      }
      LoginLookup(users.values.find(_.email == login), lockedFor)
    }

  override def recordFailure(username: String): Future[Unit] =
    answer(writes = true) {
      val login = username.toLowerCase
      val now = clock()
      failures.update(login, failures.get(login) match {
        case Some((count, start)) if start.plusSeconds(windowSeconds).isAfter(now) => (count + 1, start)
        case _                                                                       => (1, now)
      })
    }

  override def ping(): Future[Unit] = answer(writes = false)(())

  override def start(username: String, tokenHash: Array[Byte], familyId: UUID, userId: UUID, clientId: String): Future[Unit] =
    answer(writes = true) {
      failures.remove(username.toLowerCase)
      tokens.update(hex(tokenHash), Row(familyId, userId, clientId, clock().plusSeconds(refreshTtlSeconds)))
    }

  override def rotate(presentedHash: Array[Byte], clientId: Option[String], nextHash: Array[Byte]): Future[Option[Rotation]] =
    answer(writes = true) {
      val now = clock()
      tokens.get(hex(presentedHash))
        .filter(r => r.usedAt.isEmpty && r.revokedAt.isEmpty && r.expiresAt.isAfter(now) && clientId.forall(_ == r.clientId))
        .flatMap { row =>
          row.usedAt = Some(now)
          tokens.update(hex(nextHash), Row(row.familyId, row.userId, row.clientId, now.plusSeconds(refreshTtlSeconds)))
          users.get(row.userId).map(Rotation(_, row.familyId, row.clientId))
        }
    }

  override def revokeUsed(tokenHash: Array[Byte]): Future[Int] =
    answer(writes = true)(tokens.get(hex(tokenHash)).filter(_.usedAt.isDefined).fold(0)(r => revokeAll(r.familyId)))

  override def revokeFamily(tokenHash: Array[Byte]): Future[Int] =
    answer(writes = true)(tokens.get(hex(tokenHash)).fold(0)(r => revokeAll(r.familyId)))

  private def revokeAll(familyId: UUID): Int = {
    val now = clock()
    val live = tokens.values.filter(r => r.familyId == familyId && r.revokedAt.isEmpty).toList
    live.foreach(_.revokedAt = Some(now))
    live.size
  }
}
