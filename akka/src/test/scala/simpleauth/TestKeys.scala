package simpleauth

import io.micrometer.prometheusmetrics.{PrometheusConfig, PrometheusMeterRegistry}

/** The service's meters and key sets for tests, over the core's [[Vectors]]. */
object TestKeys {
  /** The service's meters on a registry of their own (no JVM meters). */
  def metrics(): Metrics = new Metrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT))

  /** A key set of `key` alone, with the contract's test settings. */
  def keySet(metrics: Metrics, key: SigningKey = Vectors.devKey, published: List[com.nimbusds.jose.jwk.JWK] = Nil): KeySet =
    KeySet.from(KeyMaterial(key, published), KeySet.TokenSettings("http://localhost:8080", "channel-api", 600), metrics)
}
