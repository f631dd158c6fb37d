package simpleauth

import akka.actor.ClassicActorSystemProvider
import akka.pattern.after
import java.util.concurrent.TimeoutException
import scala.concurrent.{ExecutionContext, Future}
import scala.concurrent.duration.*

/**
 * The readiness check behind GET /health: `SELECT 1` on a pooled connection through the repository (so it
 * waits and fails as a login's lookup does), up only if it succeeds within `timeout`.
 */
final class DatabaseHealth(users: UserRepository, timeout: FiniteDuration = 1.second)(using system: ClassicActorSystemProvider) {

  def isUp(): Future[Boolean] = {
    given ExecutionContext = ExecutionContext.parasitic
    val timedOut = after(timeout)(Future.failed(new TimeoutException("health probe timed out")))
    Future.firstCompletedOf(List(users.ping(), timedOut)).map(_ => true).recover { case _ => false }
  }
}
