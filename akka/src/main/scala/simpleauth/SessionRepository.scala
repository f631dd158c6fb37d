package simpleauth

import java.util.UUID
import scala.concurrent.Future

/** What a refresh's rotation returns: the user as the database has it now, the family (`sid`) and its `client_id`. */
final case class Rotation(user: User, familyId: UUID, clientId: String)

/**
 * The sessions (`sessions`, one per refresh-token family) and their refresh tokens (`refresh_tokens`, by their
 * SHA-256), contract §6 and §7. Every call fails with [[DatabaseUnavailable]] in an outage.
 */
trait SessionRepository {
  /**
   * S: a new session `familyId` of `userId` with its first token, bound to the stored hash the check verified
   * (`verifiedHash`), `username`'s count cleared; false (nothing written) when the user's stored hash is no longer
   * `verifiedHash`.
   */
  def start(username: String, tokenHash: Array[Byte], familyId: UUID, userId: UUID, clientId: String, verifiedHash: String): Future[Boolean]

  /**
   * R: marks the presented token used and adds its successor `nextHash` to its family, if the token is unused and
   * unexpired and its session alive (not revoked, not past its lifetime, its user's hash unchanged) and (when
   * `clientId` names one) of that client; None when nothing was marked.
   */
  def rotate(presentedHash: Array[Byte], clientId: Option[String], nextHash: Array[Byte]): Future[Option[Rotation]]

  /** U: revokes the session of a token that was used before (reuse); the sessions revoked. */
  def revokeUsed(tokenHash: Array[Byte]): Future[Int]

  /** V: revokes the session of any token (`POST /revoke`); the sessions revoked. */
  def revokeFamily(tokenHash: Array[Byte]): Future[Int]
}
