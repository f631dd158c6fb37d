package simpleauth

import java.util.UUID

import zio.*

/** Reads the channel API's `users` table. */
trait UserRepository:
  def findByEmail(email: String): IO[DatabaseUnavailable, Option[User]]

object UserRepository:
  val Query = "SELECT id, username, name, email, password_hash FROM users WHERE email = lower(?)"

  val live: URLayer[Database, UserRepository] = ZLayer.fromFunction(Live(_))

  final case class Live(db: Database) extends UserRepository:
    def findByEmail(email: String): IO[DatabaseUnavailable, Option[User]] =
      db.withConnection { c =>
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
