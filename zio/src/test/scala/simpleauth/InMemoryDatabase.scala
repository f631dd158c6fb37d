package simpleauth

import java.time.Instant
import java.util.UUID

import zio.*

/**
 * The service's tables in memory, with the meaning of §7's statements: `users`, `login_failures` and
 * `refresh_tokens`. `down` simulates an unreachable database; `queries` counts the statements asked.
 */
final case class InMemoryDatabase(
    users: Map[String, User],
    down: Ref[Boolean],
    failures: Ref[Map[String, (Int, Instant)]],
    tokens: Ref[Map[String, InMemoryDatabase.Row]],
    queries: Ref[Int],
    maxFailures: Int,
    windowSeconds: Int,
    refreshTtlSeconds: Int
) extends UserRepository, SessionRepository, DatabaseHealth:
  import InMemoryDatabase.{Row, hex}

  private def ask[A](f: Instant => UIO[A]): IO[DatabaseUnavailable, A] =
    down.get.flatMap(d =>
      if d then ZIO.fail(DatabaseUnavailable(new java.sql.SQLTransientConnectionException("down")))
      else queries.update(_ + 1) *> Clock.instant.flatMap(f)
    )

  private def inWindow(start: Instant, now: Instant) = start.isAfter(now.minusSeconds(windowSeconds))

  def findForLogin(username: String): IO[DatabaseUnavailable, LoginLookup] =
    ask { now =>
      val login = username.toLowerCase
      failures.get.map { f =>
        val locked = f.get(login).collect {
          case (n, start) if n >= maxFailures && inWindow(start, now) =>
            math.ceil((start.plusSeconds(windowSeconds).toEpochMilli - now.toEpochMilli) / 1000.0).toLong
        }
        LoginLookup(users.get(login), locked)
      }
    }

  def recordFailure(username: String): IO[DatabaseUnavailable, Unit] =
    ask { now =>
      failures.update { f =>
        val login = username.toLowerCase
        f.updated(login, f.get(login) match
          case Some((n, start)) if inWindow(start, now) => (n + 1, start)
          case _                                        => (1, now))
      }
    }

  def failureCount(username: String): UIO[Int] = failures.get.map(_.get(username.toLowerCase).fold(0)(_._1))

  def start(username: String, tokenHash: Array[Byte], familyId: UUID, userId: UUID, clientId: String): IO[DatabaseUnavailable, Unit] =
    ask { now =>
      failures.update(_ - username.toLowerCase) *>
        tokens.update(_.updated(hex(tokenHash), Row(familyId, userId, clientId, now.plusSeconds(refreshTtlSeconds), None, None)))
    }

  def rotate(presented: Array[Byte], clientId: Option[String], successor: Array[Byte]): IO[DatabaseUnavailable, Option[Rotated]] =
    ask { now =>
      tokens.modify { t =>
        t.get(hex(presented)) match
          case Some(row) if row.usedAt.isEmpty && row.revokedAt.isEmpty && row.expiresAt.isAfter(now) && clientId.forall(_ == row.clientId) =>
            val next = Row(row.familyId, row.userId, row.clientId, now.plusSeconds(refreshTtlSeconds), None, None)
            val user = users.values.find(_.id == row.userId)
            (user.map(Rotated(_, row.familyId, row.clientId)), t.updated(hex(presented), row.copy(usedAt = Some(now))).updated(hex(successor), next))
          case _ => (None, t)
      }
    }

  private def revokeFamily(presented: Array[Byte], usedOnly: Boolean): IO[DatabaseUnavailable, Int] =
    ask { now =>
      tokens.modify { t =>
        t.get(hex(presented)).filter(r => !usedOnly || r.usedAt.isDefined) match
          case None => (0, t)
          case Some(row) =>
            val hit = t.collect { case (k, r) if r.familyId == row.familyId && r.revokedAt.isEmpty => k }
            (hit.size, hit.foldLeft(t)((m, k) => m.updated(k, m(k).copy(revokedAt = Some(now)))))
      }
    }

  def revokeUsed(presented: Array[Byte]): IO[DatabaseUnavailable, Int] = revokeFamily(presented, usedOnly = true)
  def revoke(presented: Array[Byte]): IO[DatabaseUnavailable, Int]     = revokeFamily(presented, usedOnly = false)

  def row(token: String): UIO[Option[Row]] = tokens.get.map(_.get(hex(RefreshToken.hash(token))))

  def isUp: UIO[Boolean] = down.get.map(!_)
  def poolState: UIO[PoolState] = ZIO.succeed(PoolState(active = 1, idle = 2, pending = 0, max = 3))

object InMemoryDatabase:
  final case class Row(familyId: UUID, userId: UUID, clientId: String, expiresAt: Instant, usedAt: Option[Instant], revokedAt: Option[Instant])

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

  def make(maxFailures: Int = 1000, windowSeconds: Int = 300, refreshTtlSeconds: Int = 3600): UIO[InMemoryDatabase] =
    for
      down     <- Ref.make(false)
      failures <- Ref.make(Map.empty[String, (Int, Instant)])
      tokens   <- Ref.make(Map.empty[String, Row])
      queries  <- Ref.make(0)
    yield InMemoryDatabase(seedUsers, down, failures, tokens, queries, maxFailures, windowSeconds, refreshTtlSeconds)

  def layer(maxFailures: Int = 1000, windowSeconds: Int = 300): ULayer[InMemoryDatabase] = ZLayer(make(maxFailures, windowSeconds))

  /** The tables as the services they stand in for. */
  val asServices: URLayer[InMemoryDatabase, UserRepository & SessionRepository & DatabaseHealth] =
    ZLayer.fromZIOEnvironment(ZIO.serviceWith[InMemoryDatabase](d => ZEnvironment[UserRepository, SessionRepository, DatabaseHealth](d, d, d)))
