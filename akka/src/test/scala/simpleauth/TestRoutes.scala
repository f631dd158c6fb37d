package simpleauth

import akka.actor.ClassicActorSystemProvider
import akka.http.scaladsl.server.Route
import scala.concurrent.ExecutionContext

/** The service's routes over the given users, with the dev key and the contract's test settings. */
object TestRoutes {
  def signer(metrics: Metrics): TokenSigner =
    new TokenSigner(Vectors.devKey, "http://localhost:8080", "channel-api", 600, metrics)

  def apply(users: UserRepository, metrics: Metrics)(using ClassicActorSystemProvider): Route = {
    val tokenSigner = signer(metrics)
    val tokens = new TokenService(users, new PasswordVerifier(metrics), tokenSigner, new UnusableHashLog(), ExecutionContext.global)
    new TokenRoutes(tokens, new DatabaseHealth(users), tokenSigner.jwks(), metrics).routes
  }
}
