package simpleauth

import io.micrometer.core.instrument.{Counter, Gauge, Timer}
import io.micrometer.core.instrument.binder.jvm.{ClassLoaderMetrics, JvmGcMetrics, JvmMemoryMetrics, JvmThreadMetrics}
import io.micrometer.core.instrument.binder.system.{ProcessorMetrics, UptimeMetrics}
import io.micrometer.prometheusmetrics.{PrometheusConfig, PrometheusMeterRegistry}
import java.time.Duration
import java.util.concurrent.{ConcurrentHashMap, TimeUnit}
import java.util.function.Supplier

/**
 * The service's metrics (spec/README.md, "Metrics"), in Micrometer with its Prometheus registry, served by
 * `GET /metrics`. Every meter is registered up front, so recording on the request path is a counter increment
 * or a histogram update: no registry lookup, no allocation (an error status the service never sends by design
 * registers its counter on first use).
 */
final class Metrics(val registry: PrometheusMeterRegistry) {
  import Metrics.*

  private val requestDuration: Timer = Timer.builder("simpleauth.token.request.duration")
    .description("POST /token requests handled, by time to answer")
    .serviceLevelObjectives(RequestBuckets*)
    .register(registry)

  private val signingDuration: Timer = Timer.builder("simpleauth.token.signing.duration")
    .description("Time to sign one token pair (access and ID token)")
    .serviceLevelObjectives(SigningBuckets*)
    .register(registry)

  private def tokenRequests(status: Int, error: String): Counter =
    Counter.builder("simpleauth.token.requests")
      .description("Responses to POST /token by HTTP status and OAuth error code")
      .tag("status", status.toString)
      .tag("error", error)
      .register(registry)

  private val tokenOk: Counter = tokenRequests(200, "none")
  private val tokenErrors = new ConcurrentHashMap[(Int, String), Counter]()
  for ((status, error) <- ExpectedErrors) tokenErrors.put((status, error), tokenRequests(status, error))

  // One counter per scheme and result, indexed by ordinals.
  private val passwordChecks: Array[Counter] =
    (for (scheme <- PasswordScheme.values; result <- Verification.Results) yield
      Counter.builder("simpleauth.password.checks")
        .description("Password verifications by stored scheme and result")
        .tag("scheme", scheme.label)
        .tag("result", result)
        .register(registry)).toArray

  private def keyReloads(result: String): Counter =
    Counter.builder("simpleauth.key.reloads")
      .description("SIGHUP reloads of the signing key and the published keys, by result")
      .tag("result", result)
      .register(registry)

  // Both series exist (at 0) from the start.
  private val keyReloadSuccess: Counter = keyReloads("success")
  private val keyReloadFailure: Counter = keyReloads("failure")

  // One counter per reason, indexed by ordinal; all four series exist (at 0) from the start.
  private val rejections: Array[Counter] =
    RejectionReason.values.map { reason =>
      Counter.builder("simpleauth.rejections")
        .description("Logins refused by a limit (429, 503 of the overload limit) and refresh-token families revoked for reuse")
        .tag("reason", reason.label)
        .register(registry)
    }

  /** One response to POST /token: `error` is the OAuth error code, or null for a 200. */
  def tokenRequest(status: Int, error: String, nanos: Long): Unit = {
    requestDuration.record(nanos, TimeUnit.NANOSECONDS)
    if (error == null) tokenOk.increment()
    else tokenErrors.computeIfAbsent((status, error), key => tokenRequests(key._1, key._2)).increment()
  }

  def passwordCheck(scheme: PasswordScheme, result: Verification): Unit =
    passwordChecks(scheme.ordinal * Verification.Results.length + result.ordinal).increment()

  /** One login refused by a limit of §8, or one family revoked for reuse (§7). */
  def rejection(reason: RejectionReason): Unit = rejections(reason.ordinal).increment()

  /** One SIGHUP reload of the keys, good or refused. */
  def keyReload(success: Boolean): Unit = (if (success) keyReloadSuccess else keyReloadFailure).increment()

  def tokenPairSigned(nanos: Long): Unit = signingDuration.record(nanos, TimeUnit.NANOSECONDS)

  /**
   * The pool's gauges, read when scraped: `active` and `idle` connections and the maximum from HikariCP's
   * pool MXBean; `pending` counts the callers waiting for a connection (`OutageGate.waiting`).
   */
  def bindPool(pool: PoolStatistics): Unit = {
    def gauge(name: String, description: String, read: () => Int) =
      Gauge.builder(name, (() => Int.box(read())): Supplier[Number]).description(description).strongReference(true)
    gauge("simpleauth.db.pool.connections", "Pooled database connections by state", () => pool.active)
      .tag("state", "active").register(registry)
    gauge("simpleauth.db.pool.connections", "Pooled database connections by state", () => pool.idle)
      .tag("state", "idle").register(registry)
    gauge("simpleauth.db.pool.pending", "Callers waiting for a database connection", () => pool.pending).register(registry)
    gauge("simpleauth.db.pool.max", "Maximum size of the database pool", () => pool.max).register(registry)
    ()
  }

  /** The Prometheus text exposition format, version 0.0.4. */
  def scrape(): String = registry.scrape()
}

/** The `reason` label of `simpleauth_rejections_total`. */
enum RejectionReason(val label: String) {
  case UsernameLocked extends RejectionReason("username_locked")
  case AddressLocked extends RejectionReason("address_locked")
  case Overload extends RejectionReason("overload")
  case RefreshReuse extends RejectionReason("refresh_reuse")
}

/** What the pool gauges read. */
trait PoolStatistics {
  def active: Int
  def idle: Int
  def pending: Int
  def max: Int
}

object Metrics {
  private val RequestBuckets: Seq[Duration] =
    Seq(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5).map(seconds)
  private val SigningBuckets: Seq[Duration] =
    Seq(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1).map(seconds)
  private def seconds(s: Double): Duration = Duration.ofNanos(math.round(s * 1e9))

  /** The error answers of POST /token, registered up front so that they show as 0 before they first happen. */
  private val ExpectedErrors: Seq[(Int, String)] = Seq(
    400 -> "invalid_request", 400 -> "invalid_grant", 400 -> "unsupported_grant_type",
    413 -> "invalid_request", 415 -> "invalid_request", 429 -> "temporarily_unavailable", 503 -> "temporarily_unavailable", 500 -> "server_error")

  /** A registry with the service's meters and Micrometer's JVM and process meters. */
  def apply(): Metrics = {
    val registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)
    new JvmMemoryMetrics().bindTo(registry)
    new JvmGcMetrics().bindTo(registry)
    new JvmThreadMetrics().bindTo(registry)
    new ClassLoaderMetrics().bindTo(registry)
    new ProcessorMetrics().bindTo(registry)
    new UptimeMetrics().bindTo(registry)
    new Metrics(registry)
  }
}
