package simpleauth

import java.sql.SQLTransientConnectionException
import java.time.Instant
import java.util.{HexFormat, UUID}
import scala.collection.mutable
import scala.concurrent.Future

/**
 * `users`, `login_failures`, `sessions` and `refresh_tokens` in memory, with the meaning of the statements of contract
 * §7 (JdbcUserRepository, JdbcSessionRepository), for the route and service tests. `down` makes every call fail the
 * way an unreachable database does; `clock` can be moved.
 */
class InMemoryStore(
    initialUsers: Seq[User],
    maxFailures: Int = 1000000,
    windowSeconds: Int = 300,
    refreshTtlSeconds: Int = 86400,
    maxLifetimeSeconds: Int = 7776000
) extends UserRepository with SessionRepository {
  @volatile var down = false
  /** Failing only the statements that write a session or a token: the reservation still answers. */
  @volatile var writesDown = false
  @volatile var lookups = List.empty[String]
  /** Every call, answered or failed. */
  @volatile var calls = 0
  /** The usernames whose reservation was given back (G), in order. */
  @volatile var releases = List.empty[String]
  @volatile var clock: () => Instant = () => Instant.now()

  final case class Session(userId: UUID, clientId: String, credential: String, expiresAt: Instant, var revokedAt: Option[Instant] = None)
  final case class Token(familyId: UUID, expiresAt: Instant, var usedAt: Option[Instant] = None)
  /** A token with its session, as the tests look at it. */
  final case class Row(familyId: UUID, userId: UUID, clientId: String, expiresAt: Instant, usedAt: Option[Instant],
                       revokedAt: Option[Instant], sessionExpiresAt: Instant)

  private val users = mutable.Map.from(initialUsers.map(u => u.id -> u))
  private val failures = mutable.Map.empty[String, (Int, Instant)]
  val sessions: mutable.Map[UUID, Session] = mutable.Map.empty
  val tokens: mutable.Map[String, Token] = mutable.Map.empty

  private def hex(hash: Array[Byte]) = HexFormat.of().formatHex(hash)
  private def unavailable[A]: Future[A] =
    Future.failed(new DatabaseUnavailable(new SQLTransientConnectionException("pool timeout")))
  private def answer[A](writes: Boolean)(body: => A): Future[A] = {
    synchronized(calls += 1)
    if (down || (writes && writesDown)) unavailable else Future.successful(synchronized(body))
  }
  private def earlier(a: Instant, b: Instant) = if (a.isBefore(b)) a else b

  def putUser(user: User): Unit = synchronized(users.update(user.id, user))
  def failureCount(username: String): Option[Int] = synchronized(failures.get(username.toLowerCase).map(_._1))
  def row(token: String): Option[Row] = synchronized(tokens.get(hex(RefreshToken.hash(token))).map(rowOf))
  def rows: List[Row] = synchronized(tokens.values.map(rowOf).toList)
  private def rowOf(t: Token): Row = {
    val s = sessions(t.familyId)
    Row(t.familyId, s.userId, s.clientId, t.expiresAt, t.usedAt, s.revokedAt, s.expiresAt)
  }

  /** L: one attempt reserved (at most maxFailures + 1 counted), the user read, `locked_for` when beyond the limit. */
  override def reserveLogin(username: String): Future[LoginLookup] =
    answer(writes = false) {
      lookups = username :: lookups
      val login = username.toLowerCase
      val now = clock()
      val (count, start) = failures.get(login) match {
        case Some((c, s)) if s.plusSeconds(windowSeconds).isAfter(now) => (math.min(c + 1, maxFailures + 1), s)
        case _                                                            => (1, now)
      }
      failures.update(login, (count, start))
      val lockedFor =
        if (count <= maxFailures) None
        else Some(math.max(1, math.ceil((start.plusSeconds(windowSeconds).toEpochMilli - now.toEpochMilli) / 1000.0).toInt))
      LoginLookup(users.values.find(_.email == login), lockedFor)
    }

  /** G. */
  override def releaseLogin(username: String): Future[Unit] =
    answer(writes = false) {
      releases = username :: releases
      failures.get(username.toLowerCase).filter(_._1 > 0).foreach { case (c, s) => failures.update(username.toLowerCase, (c - 1, s)) }
    }

  override def ping(): Future[Unit] = answer(writes = false)(())

  /** S: only while the user's stored hash is the verified one. */
  override def start(username: String, tokenHash: Array[Byte], familyId: UUID, userId: UUID, clientId: String,
                     verifiedHash: String): Future[Boolean] =
    answer(writes = true) {
      users.get(userId).filter(_.passwordHash == verifiedHash) match {
        case None => false
        case Some(user) =>
          val now = clock()
          val session = Session(userId, clientId, user.passwordHash, now.plusSeconds(maxLifetimeSeconds))
          sessions.update(familyId, session)
          failures.remove(username.toLowerCase)
          tokens.update(hex(tokenHash), Token(familyId, earlier(now.plusSeconds(refreshTtlSeconds), session.expiresAt)))
          true
      }
    }

  /** R: the session alive (not revoked, not expired, its credential the user's hash now), the token unused, unexpired. */
  override def rotate(presentedHash: Array[Byte], clientId: Option[String], nextHash: Array[Byte]): Future[Option[Rotation]] =
    answer(writes = true) {
      val now = clock()
      for {
        token   <- tokens.get(hex(presentedHash))
        session <- sessions.get(token.familyId)
        user    <- users.get(session.userId)
        if session.revokedAt.isEmpty && session.expiresAt.isAfter(now) && clientId.forall(_ == session.clientId) &&
          user.passwordHash == session.credential && token.usedAt.isEmpty && token.expiresAt.isAfter(now)
      } yield {
        token.usedAt = Some(now)
        tokens.update(hex(nextHash), Token(token.familyId, earlier(now.plusSeconds(refreshTtlSeconds), session.expiresAt)))
        Rotation(user, token.familyId, session.clientId)
      }
    }

  /** U. */
  override def revokeUsed(tokenHash: Array[Byte]): Future[Int] =
    answer(writes = true)(tokens.get(hex(tokenHash)).filter(_.usedAt.isDefined).fold(0)(t => revoke(t.familyId)))

  /** V. */
  override def revokeFamily(tokenHash: Array[Byte]): Future[Int] =
    answer(writes = true)(tokens.get(hex(tokenHash)).fold(0)(t => revoke(t.familyId)))

  private def revoke(familyId: UUID): Int =
    sessions.get(familyId).filter(_.revokedAt.isEmpty).fold(0) { s =>
      s.revokedAt = Some(clock())
      1
    }
}
