package simpleauth

import java.time.Instant
import java.util.UUID

import zio.*

/**
 * The service's tables in memory, with the meaning of §7's statements: `users`, `login_failures`, `sessions` and
 * `refresh_tokens`. `down` simulates an unreachable database; `queries` counts the statements asked, `askedOn` keeps
 * the names of the threads that asked them.
 */
final case class InMemoryDatabase(
    userTable: Ref[Map[String, User]],
    down: Ref[Boolean],
    failures: Ref[Map[String, (Int, Instant)]],
    sessions: Ref[Map[UUID, InMemoryDatabase.Session]],
    tokens: Ref[Map[String, InMemoryDatabase.Token]],
    queries: Ref[Int],
    releases: Ref[List[String]],
    askedOn: Ref[Set[String]],
    maxFailures: Int,
    windowSeconds: Int,
    refreshTtlSeconds: Int,
    maxLifetimeSeconds: Int
) extends UserRepository, SessionRepository, DatabaseHealth:
  import InMemoryDatabase.{Row, Session, Token, hex}

  /** The seed users (the table as it was made). */
  val users: Map[String, User] = InMemoryDatabase.seedUsers

  private def ask[A](f: Instant => UIO[A]): IO[DatabaseUnavailable, A] =
    down.get.flatMap(d =>
      if d then ZIO.fail(DatabaseUnavailable(new java.sql.SQLTransientConnectionException("down")))
      else queries.update(_ + 1) *> askedOn.update(_ + Thread.currentThread.getName) *> Clock.instant.flatMap(f)
    )

  private def inWindow(start: Instant, now: Instant) = start.isAfter(now.minusSeconds(windowSeconds))
  private def earlier(a: Instant, b: Instant) = if a.isBefore(b) then a else b

  /** L: one attempt reserved (at most maxFailures + 1 counted), the user read, `locked_for` when beyond the limit. */
  def reserveLogin(username: String): IO[DatabaseUnavailable, LoginLookup] =
    ask { now =>
      val login = username.toLowerCase
      failures.modify { f =>
        val (n, start) = f.get(login) match
          case Some((n, start)) if inWindow(start, now) => (math.min(n + 1, maxFailures + 1), start)
          case _                                        => (1, now)
        val locked =
          if n <= maxFailures then None
          else Some(math.max(1L, math.ceil((start.plusSeconds(windowSeconds).toEpochMilli - now.toEpochMilli) / 1000.0).toLong))
        (locked, f.updated(login, (n, start)))
      }.flatMap(locked => userTable.get.map(u => LoginLookup(u.get(login), locked)))
    }

  /** G. */
  def releaseLogin(username: String): IO[DatabaseUnavailable, Unit] =
    ask { _ =>
      releases.update(username :: _) *>
        failures.update(f => f.get(username.toLowerCase).filter(_._1 > 0).fold(f)((n, s) => f.updated(username.toLowerCase, (n - 1, s))))
    }

  def failureCount(username: String): UIO[Int] = failures.get.map(_.get(username.toLowerCase).fold(0)(_._1))

  def putUser(user: User): UIO[Unit] = userTable.update(_.updated(user.email, user))

  /** S: only while the user's stored hash is the verified one. */
  def start(username: String, tokenHash: Array[Byte], familyId: UUID, userId: UUID, clientId: String, verifiedHash: String): IO[DatabaseUnavailable, Boolean] =
    ask { now =>
      userTable.get.map(_.values.find(u => u.id == userId && u.passwordHash == verifiedHash)).flatMap {
        case None => ZIO.succeed(false)
        case Some(user) =>
          val session = Session(userId, clientId, user.passwordHash, now.plusSeconds(maxLifetimeSeconds), None)
          sessions.update(_.updated(familyId, session)) *>
            failures.update(_ - username.toLowerCase) *>
            tokens.update(_.updated(hex(tokenHash), Token(familyId, earlier(now.plusSeconds(refreshTtlSeconds), session.expiresAt), None)))
              .as(true)
      }
    }

  /** R: the session alive (not revoked, not expired, its credential the user's hash now), the token unused and unexpired. */
  def rotate(presented: Array[Byte], clientId: Option[String], successor: Array[Byte]): IO[DatabaseUnavailable, Option[Rotated]] =
    ask { now =>
      for
        s     <- sessions.get
        users <- userTable.get
        out <- tokens.modify { t =>
                 val rotated = for
                   token   <- t.get(hex(presented))
                   session <- s.get(token.familyId)
                   user    <- users.values.find(_.id == session.userId)
                   if session.revokedAt.isEmpty && session.expiresAt.isAfter(now) && clientId.forall(_ == session.clientId) &&
                     user.passwordHash == session.credential && token.usedAt.isEmpty && token.expiresAt.isAfter(now)
                 yield (token, session, user)
                 rotated match
                   case None => (None, t)
                   case Some((token, session, user)) =>
                     val next = Token(token.familyId, earlier(now.plusSeconds(refreshTtlSeconds), session.expiresAt), None)
                     (Some(Rotated(user, token.familyId, session.clientId)),
                       t.updated(hex(presented), token.copy(usedAt = Some(now))).updated(hex(successor), next))
               }
      yield out
    }

  private def revokeFamily(presented: Array[Byte], usedOnly: Boolean): IO[DatabaseUnavailable, Int] =
    ask { now =>
      tokens.get.map(_.get(hex(presented)).filter(t => !usedOnly || t.usedAt.isDefined)).flatMap {
        case None => ZIO.succeed(0)
        case Some(token) =>
          sessions.modify { s =>
            s.get(token.familyId).filter(_.revokedAt.isEmpty) match
              case None          => (0, s)
              case Some(session) => (1, s.updated(token.familyId, session.copy(revokedAt = Some(now))))
          }
      }
    }

  def revokeUsed(presented: Array[Byte]): IO[DatabaseUnavailable, Int] = revokeFamily(presented, usedOnly = true)
  def revoke(presented: Array[Byte]): IO[DatabaseUnavailable, Int]     = revokeFamily(presented, usedOnly = false)

  /** A token with its session, as the tests look at it. */
  def row(token: String): UIO[Option[Row]] =
    tokens.get.zip(sessions.get).map { (t, s) =>
      t.get(hex(RefreshToken.hash(token))).map { tk =>
        val session = s(tk.familyId)
        Row(tk.familyId, session.userId, session.clientId, tk.expiresAt, tk.usedAt, session.revokedAt, session.expiresAt)
      }
    }

  def isUp: UIO[Boolean] = down.get.map(!_)
  def poolState: UIO[PoolState] = ZIO.succeed(PoolState(active = 1, idle = 2, pending = 0, max = 3))

object InMemoryDatabase:
  final case class Session(userId: UUID, clientId: String, credential: String, expiresAt: Instant, revokedAt: Option[Instant])
  final case class Token(familyId: UUID, expiresAt: Instant, usedAt: Option[Instant])
  final case class Row(familyId: UUID, userId: UUID, clientId: String, expiresAt: Instant, usedAt: Option[Instant],
                       revokedAt: Option[Instant], sessionExpiresAt: Instant)

  def hex(bytes: Array[Byte]): String = bytes.map(b => f"${b & 0xff}%02x").mkString

  private def user(email: String, hash: String) = User(UUID.randomUUID(), email.takeWhile(_ != '@'), "Test User", email, hash)
  private def hashOf(name: String) = Vectors.passwords.find(_.name == name).get.hash

  /** john (legacy scheme), jane (argon2id), broken (no scheme), disabled (`sql/users.py`'s marker, legacy password kept). */
  val seedUsers: Map[String, User] = Map(
    "john@example.com"     -> user("john@example.com", hashOf("legacy-john")),
    "jane@example.com"     -> user("jane@example.com", hashOf("argon2id-owasp-floor")),
    "broken@example.com"   -> user("broken@example.com", "$bcrypt$nope"),
    "disabled@example.com" -> user("disabled@example.com", "$disabled$" + hashOf("legacy-john"))
  )

  def make(maxFailures: Int = 1000, windowSeconds: Int = 300, refreshTtlSeconds: Int = 3600, maxLifetimeSeconds: Int = 7776000): UIO[InMemoryDatabase] =
    for
      users    <- Ref.make(seedUsers)
      down     <- Ref.make(false)
      failures <- Ref.make(Map.empty[String, (Int, Instant)])
      sessions <- Ref.make(Map.empty[UUID, Session])
      tokens   <- Ref.make(Map.empty[String, Token])
      queries  <- Ref.make(0)
      releases <- Ref.make(List.empty[String])
      askedOn  <- Ref.make(Set.empty[String])
    yield InMemoryDatabase(users, down, failures, sessions, tokens, queries, releases, askedOn, maxFailures, windowSeconds, refreshTtlSeconds,
      maxLifetimeSeconds)

  def layer(maxFailures: Int = 1000, windowSeconds: Int = 300, maxLifetimeSeconds: Int = 7776000): ULayer[InMemoryDatabase] =
    ZLayer(make(maxFailures, windowSeconds, maxLifetimeSeconds = maxLifetimeSeconds))

  /** JDBC's executor as the service has it (`Database.jdbcExecutor`), here two threads. */
  val jdbc: ULayer[JdbcExecutor] = ZLayer.scoped(Database.jdbcExecutor(2).map(JdbcExecutor(_)))

  /** The tables as the services they stand in for. */
  val asServices: URLayer[InMemoryDatabase, UserRepository & SessionRepository & DatabaseHealth] =
    ZLayer.fromZIOEnvironment(ZIO.serviceWith[InMemoryDatabase](d => ZEnvironment[UserRepository, SessionRepository, DatabaseHealth](d, d, d)))
