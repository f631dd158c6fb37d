package simpleauth

import java.util.UUID

/** A row of the channel API's `users` table: what the tokens say about the user, and the stored password hash. */
final case class User(id: UUID, username: String, name: String, email: String, passwordHash: String)

/** The password grant's lookup: the user, if any, and the seconds the username's lock has left, if it is locked. */
final case class LoginLookup(user: Option[User], lockedForSeconds: Option[Long])
