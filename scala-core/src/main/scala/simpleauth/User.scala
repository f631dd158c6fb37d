package simpleauth

import java.util.UUID

/** A row of `users`: the fields that go into the tokens, and the stored password hash. */
final case class User(id: UUID, username: String, name: String, email: String, passwordHash: String) {
  override def toString: String = s"User($id, $username)" // never the hash
}
