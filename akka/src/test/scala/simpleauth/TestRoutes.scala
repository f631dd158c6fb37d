package simpleauth

import akka.actor.ClassicActorSystemProvider
import akka.http.scaladsl.server.Route
import scala.concurrent.ExecutionContext

/** The service's routes over the given users, with the dev key and the contract's test settings. */
object TestRoutes {
  def keys(metrics: Metrics): KeyRing = KeyRing.fixed(Vectors.keySet(metrics), metrics)

  def apply(users: UserRepository, metrics: Metrics, keyRing: Option[KeyRing] = None)(using ClassicActorSystemProvider): Route = {
    val ring = keyRing.getOrElse(keys(metrics))
    val tokens = new TokenService(users, new PasswordVerifier(metrics), ring, new UnusableHashLog(), ExecutionContext.global)
    new TokenRoutes(tokens, new DatabaseHealth(users), ring, metrics).routes
  }
}
