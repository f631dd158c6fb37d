package simpleauth

import zio.*
import zio.metrics.{Metric, MetricKeyType, MetricLabel}

/**
 * The service's metrics (contract: Metrics), recorded with ZIO's own `zio.metrics.Metric` where the request path
 * already decides things (error mapping, password verifier, signer, pool) and served by `GET /metrics` as
 * Prometheus text. Every labelled series is made once here, so recording is a lookup-free update of a ZIO metric.
 */
object Metrics:
  private def seconds(d: Duration): Double = d.toNanos / 1e9

  // ---------------------------------------------------------------- POST /token

  private val tokenRequestsName = "simpleauth_token_requests_total"
  private def tokenRequests(status: Int, error: String) =
    Metric.counter(tokenRequestsName).tagged(MetricLabel("status", status.toString), MetricLabel("error", error))

  private val tokenOk             = tokenRequests(200, "none")
  private val tokenInvalidRequest = tokenRequests(400, "invalid_request")
  private val tokenInvalidGrant   = tokenRequests(400, "invalid_grant")
  private val tokenUnsupported    = tokenRequests(400, "unsupported_grant_type")
  private val tokenTooLarge       = tokenRequests(413, "invalid_request")
  private val tokenMediaType      = tokenRequests(415, "invalid_request")
  private val tokenUnavailable    = tokenRequests(503, "temporarily_unavailable")
  private val tokenTooMany        = tokenRequests(429, "temporarily_unavailable")
  private val tokenServerError    = tokenRequests(500, "server_error")
  private val tokenNotAllowed     = tokenRequests(405, "invalid_request")
  private val tokenNotFound       = tokenRequests(404, "not_found")

  /** One per response to `POST /token`: `None` for a 200, else the error it was answered with. */
  def tokenAnswered(error: Option[ApiError]): UIO[Unit] =
    (error match
      case None                                 => tokenOk
      case Some(ApiError.InvalidRequest(_))     => tokenInvalidRequest
      case Some(ApiError.InvalidGrant)          => tokenInvalidGrant
      case Some(ApiError.InvalidRefreshToken)   => tokenInvalidGrant
      case Some(ApiError.TooManyFailedLogins(_)) => tokenTooMany
      case Some(ApiError.UnsupportedGrantType)  => tokenUnsupported
      case Some(ApiError.PayloadTooLarge(_))    => tokenTooLarge
      case Some(ApiError.UnsupportedMediaType)  => tokenMediaType
      case Some(ApiError.TemporarilyUnavailable) => tokenUnavailable
      case Some(ApiError.ServerError)           => tokenServerError
      case Some(ApiError.MethodNotAllowed(_))   => tokenNotAllowed
      case Some(ApiError.NotFound)              => tokenNotFound
    ).increment

  val TokenRequestBuckets: Chunk[Double] = Chunk(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)

  private val tokenRequestHistogram =
    Metric.histogram("simpleauth_token_request_duration_seconds", MetricKeyType.Histogram.Boundaries.fromChunk(TokenRequestBuckets))

  /** Every `POST /token` handled, as an aspect: `effect @@ tokenRequestDuration`. */
  val tokenRequestDuration = tokenRequestHistogram.trackDurationWith(seconds)

  // ---------------------------------------------------------------- passwords

  private def passwordChecks(scheme: String, result: String) =
    Metric.counter("simpleauth_password_checks_total").tagged(MetricLabel("scheme", scheme), MetricLabel("result", result))

  private val schemes = List("argon2id", "hmac-sha256", "unknown")
  private val checks: Map[(String, String), Metric.Counter[Long]] =
    (for s <- schemes; r <- List("match", "mismatch", "unusable") yield (s, r) -> passwordChecks(s, r)).toMap
  private val dummyCheck = passwordChecks("dummy", "mismatch")

  /** The scheme a stored hash names by its prefix; `unknown` if none we know (so labels stay bounded). */
  def schemeOf(stored: String): String =
    if stored.startsWith("$argon2id$") then "argon2id"
    else if stored.startsWith("$hmac-sha256$") then "hmac-sha256"
    else "unknown"

  def passwordChecked(stored: String, result: Verification): UIO[Unit] =
    val outcome = result match
      case Verification.Match       => "match"
      case Verification.Mismatch    => "mismatch"
      case Verification.Unusable(_) => "unusable"
    checks((schemeOf(stored), outcome)).increment

  /** The unknown-user equaliser: always a mismatch. */
  val dummyChecked: UIO[Unit] = dummyCheck.increment

  // ---------------------------------------------------------------- signing

  val TokenSigningBuckets: Chunk[Double] = Chunk(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1)

  private val tokenSigningHistogram =
    Metric.histogram("simpleauth_token_signing_duration_seconds", MetricKeyType.Histogram.Boundaries.fromChunk(TokenSigningBuckets))

  /** Time to sign one token pair (both tokens), as an aspect. */
  val tokenSigningDuration = tokenSigningHistogram.trackDurationWith(seconds)

  // ---------------------------------------------------------------- key reloads (SIGHUP)

  private def keyReloads(result: String) = Metric.counter("simpleauth_key_reloads_total").tagged(MetricLabel("result", result))

  private val keyReloadSuccess = keyReloads("success")
  private val keyReloadFailure = keyReloads("failure")

  /** One per SIGHUP reload of the keys. */
  def keysReloaded(success: Boolean): UIO[Unit] = (if success then keyReloadSuccess else keyReloadFailure).increment

  /** The two counters' values (success, failure), for tests. */
  val keyReloadCounts: UIO[(Double, Double)] = keyReloadSuccess.value.map(_.count) <*> keyReloadFailure.value.map(_.count)

  // ---------------------------------------------------------------- limits and reuse (§7, §8)

  /** Why a request was refused by a limit, or a family revoked: the `reason` label of `simpleauth_rejections_total`. */
  enum Rejection(val label: String):
    case UsernameLocked extends Rejection("username_locked")
    case AddressLocked  extends Rejection("address_locked")
    case Overload       extends Rejection("overload")
    case RefreshReuse   extends Rejection("refresh_reuse")

  private val rejections: Map[Rejection, Metric.Counter[Long]] =
    Rejection.values.map(r => r -> Metric.counter("simpleauth_rejections_total").tagged(MetricLabel("reason", r.label))).toMap

  /** One per 429 of either lock, per 503 of the overload limit, per family revoked for reuse. */
  def rejected(reason: Rejection): UIO[Unit] = rejections(reason).increment

  /** A reason's count, for tests. */
  def rejectionCount(reason: Rejection): UIO[Double] = rejections(reason).value.map(_.count)

  // ---------------------------------------------------------------- pool

  private val poolActive  = Metric.gauge("simpleauth_db_pool_connections").tagged(MetricLabel("state", "active"))
  private val poolIdle    = Metric.gauge("simpleauth_db_pool_connections").tagged(MetricLabel("state", "idle"))
  private val poolPending = Metric.gauge("simpleauth_db_pool_pending")
  private val poolMax     = Metric.gauge("simpleauth_db_pool_max")

  /** Pool gauges are read from the pool when scraped (nothing to do per request). */
  def poolSampled(state: PoolState): UIO[Unit] =
    poolActive.update(state.active.toDouble) *> poolIdle.update(state.idle.toDouble) *>
      poolPending.update(state.pending.toDouble) *> poolMax.update(state.max.toDouble)

  // ---------------------------------------------------------------- exposition

  val ContentType = "text/plain; version=0.0.4; charset=utf-8"

  /**
   * ZIO registers a metric on its first update or read; reading the contract's series makes every family appear
   * (at zero) from the first scrape on, before any request has touched it.
   */
  private val contractSeries: UIO[Unit] =
    ZIO.foreachDiscard(
      List(tokenOk, tokenInvalidRequest, tokenInvalidGrant, tokenUnsupported, tokenTooLarge, tokenMediaType, tokenUnavailable,
        tokenTooMany) ++ checks.values ++ List(dummyCheck, keyReloadSuccess, keyReloadFailure) ++ rejections.values
    )(_.value) *> tokenRequestHistogram.value *> tokenSigningHistogram.value.unit

  /** The pool sampled, then every metric of this runtime's registry as Prometheus text (format 0.0.4). */
  def scrape[R](pool: URIO[R, PoolState]): URIO[R, String] =
    contractSeries *> pool.flatMap(poolSampled) *> ZIO.metrics.map(m => PrometheusText.render(m.metrics))
