package simpleauth

import akka.actor.ClassicActorSystemProvider
import akka.http.scaladsl.server.Route
import scala.concurrent.ExecutionContext

/** The service's routes over the given store, with the dev key and the contract's test settings. */
object TestRoutes {
  def keys(metrics: Metrics): KeyRing = KeyRing.fixed(TestKeys.keySet(metrics), metrics)

  /** The token service over `store`; the limits out of the way unless given. */
  def service(
      store: InMemoryStore,
      metrics: Metrics,
      keyRing: Option[KeyRing] = None,
      addresses: AddressLimiter = new AddressLimiter(1000000, 300),
      checks: PasswordCheckLimit = new PasswordCheckLimit(1000),
      passwords: Option[PasswordVerifier] = None
  ): TokenService =
    new TokenService(store, store, passwords.getOrElse(new PasswordVerifier(metrics)), keyRing.getOrElse(keys(metrics)),
      new UnusableHashLog(), ExecutionContext.global, metrics, addresses, checks)

  /** The public port's routes. */
  def apply(
      store: InMemoryStore,
      metrics: Metrics,
      keyRing: Option[KeyRing] = None,
      addresses: AddressLimiter = new AddressLimiter(1000000, 300),
      checks: PasswordCheckLimit = new PasswordCheckLimit(1000),
      trustedProxies: TrustedProxies = TrustedProxies.None
  )(using ClassicActorSystemProvider): Route = of(store, metrics, keyRing, addresses, checks, trustedProxies).routes

  /** Both listeners' routes: `routes` (the public port) and `metricsRoutes` (METRICS_PORT). */
  def of(
      store: InMemoryStore,
      metrics: Metrics,
      keyRing: Option[KeyRing] = None,
      addresses: AddressLimiter = new AddressLimiter(1000000, 300),
      checks: PasswordCheckLimit = new PasswordCheckLimit(1000),
      trustedProxies: TrustedProxies = TrustedProxies.None
  )(using ClassicActorSystemProvider): TokenRoutes = {
    val ring = keyRing.getOrElse(keys(metrics))
    val tokens = service(store, metrics, Some(ring), addresses, checks)
    new TokenRoutes(tokens, new DatabaseHealth(store), ring, metrics, trustedProxies)
  }
}
