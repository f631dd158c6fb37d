package simpleauth

import java.util.UUID
import scala.concurrent.Future

/** What a refresh's rotation returns: the user as the database has it now, the family (`sid`) and its `client_id`. */
final case class Rotation(user: User, familyId: UUID, clientId: String)

/**
 * The refresh tokens of the sessions (`refresh_tokens`, contract §7), by their SHA-256. Every call fails with
 * [[DatabaseUnavailable]] in an outage.
 */
trait SessionRepository {
  /** A new family `familyId` with its first token for `userId`; clears `username`'s failure count in the same statement. */
  def start(username: String, tokenHash: Array[Byte], familyId: UUID, userId: UUID, clientId: String): Future[Unit]

  /**
   * Marks the presented token used and adds its successor `nextHash` to its family, if the token is unused,
   * unrevoked, unexpired and (when `clientId` names one) of that client; None when nothing was marked.
   */
  def rotate(presentedHash: Array[Byte], clientId: Option[String], nextHash: Array[Byte]): Future[Option[Rotation]]

  /** Revokes the family of a token that was used before (reuse, or a disabled user's refresh); the rows revoked. */
  def revokeUsed(tokenHash: Array[Byte]): Future[Int]

  /** Revokes the family of any token (`POST /revoke`); the rows revoked. */
  def revokeFamily(tokenHash: Array[Byte]): Future[Int]
}
