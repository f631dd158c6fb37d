package simpleauth

import java.io.FileInputStream
import java.net.{URI, URISyntaxException, URLDecoder}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}
import java.security.cert.CertificateFactory
import scala.util.control.NonFatal

/**
 * Where and how to reach PostgreSQL, translated from a libpq URL to JDBC.
 *
 * @param tls pgjdbc connection properties for TLS (`sslmode`, `sslrootcert`, `sslfactory`), see [[Settings.tlsProperties]]
 */
final case class DatabaseSettings(
    jdbcUrl: String,
    user: Option[String],
    password: Option[String],
    tls: Map[String, String] = Map("sslmode" -> "prefer")
) {
  override def toString: String = s"DatabaseSettings($jdbcUrl, user=${user.getOrElse("-")}, password=***, tls=$tls)"
}

/**
 * Everything the service reads from its environment (contract §5), validated up front.
 *
 * @param dbMaxLifetimeSeconds a pooled connection older than this is closed when it is next returned or found idle,
 *                             never in the middle of a query, and replaced on demand (`DB_MAX_LIFETIME_SECONDS`)
 * @param dbIdleTimeoutSeconds a connection idle in the pool longer than this is closed; the pool may shrink to none
 *                             while idle and reopens on demand (`DB_IDLE_TIMEOUT_SECONDS`)
 */
final case class Settings(
    host: String,
    port: Int,
    database: DatabaseSettings,
    dbPoolSize: Int,
    dbAcquireTimeoutMs: Long,
    keySources: KeySources,
    keys: KeyMaterial,
    issuer: String,
    audience: String,
    tokenTtlSeconds: Long,
    defaultClientId: String,
    logLevel: String,
    limits: LimitSettings = LimitSettings(),
    dbMaxLifetimeSeconds: Long = Settings.DefaultMaxLifetimeSeconds,
    dbIdleTimeoutSeconds: Long = Settings.DefaultIdleTimeoutSeconds,
    metricsPort: Int = Settings.DefaultMetricsPort
)

/**
 * The settings of sessions and limits (contract §5, §7, §8).
 *
 * @param trustedProxies            the proxies whose `X-Forwarded-For` is believed (`TRUSTED_PROXIES`, [[ClientAddress]])
 * @param maxPasswordChecks         argon2id checks admitted at once, running or waiting for a core (`MAX_PASSWORD_CHECKS`)
 * @param refreshMaxLifetimeSeconds a session ends this long after its password grant; rotation never extends it
 *                                  (`REFRESH_MAX_LIFETIME_SECONDS`, not less than `REFRESH_TTL_SECONDS`)
 */
final case class LimitSettings(
    refreshTtlSeconds: Int = 2592000,
    loginMaxFailures: Int = 10,
    loginFailureWindowSeconds: Int = 300,
    loginIpMaxFailures: Int = 100,
    trustedProxies: TrustedProxies = TrustedProxies.None,
    maxPasswordChecks: Int = LimitSettings.defaultMaxPasswordChecks(),
    refreshMaxLifetimeSeconds: Int = LimitSettings.DefaultRefreshMaxLifetimeSeconds
)

object LimitSettings {
  val DefaultRefreshMaxLifetimeSeconds = 7776000 // 90 days

  /**
   * 4 × the argon2id checks this process runs at once (spec/README.md §8): one per core, fewer where the heap bounds
   * them (`Argon2Memory.checksAtOnce`: one on the 96 MiB heap), so that the wait behind the admitted checks stays at
   * about four argon2id times.
   */
  def defaultMaxPasswordChecks(checksAtOnce: Int = Argon2Memory.checksAtOnce): Int = 4 * checksAtOnce
}

/** A setting refused at start: the one line the service prints before it exits with code 2. */
final case class SettingsError(message: String)

object Settings {
  private val MinAcquireTimeoutMs = 250L // HikariCP's floor for connectionTimeout

  val DefaultMaxLifetimeSeconds = 600L
  val DefaultIdleTimeoutSeconds = 300L
  /** Where `GET /metrics` is served (contract §5): fly's `[metrics]` scrapes it over the private network. */
  val DefaultMetricsPort = 9091
  // HikariCP's own minimums (maxLifetime 30 s, idleTimeout 10 s): below them it would quietly use its defaults.
  val MinMaxLifetimeSeconds = 30L
  val MinIdleTimeoutSeconds = 10L

  /**
   * The settings of a process that runs `checksAtOnce` argon2id checks at once (the default of MAX_PASSWORD_CHECKS).
   * By name, so that `Argon2Memory` is first touched only once the settings read before it are valid: initialising
   * it is where Scala's lazy vals first call `sun.misc.Unsafe`, on which JDK 25 prints four warning lines to stderr,
   * and a refused setting must stay the one line there.
   */
  def fromEnv(env: Map[String, String] = sys.env, checksAtOnce: => Int = Argon2Memory.checksAtOnce): Either[SettingsError, Settings] = {
    def str(name: String, default: String): String =
      env.get(name).map(_.trim).filter(_.nonEmpty).getOrElse(default)
    def long(name: String, default: Long, min: Long, max: Long): Either[SettingsError, Long] = {
      val raw = str(name, default.toString)
      raw.toLongOption.filter(v => v >= min && v <= max)
        .toRight(SettingsError(s"$name must be an integer between $min and $max, got '$raw'"))
    }
    // The settings of §7 and §8: positive integers bound into SQL as `integer`.
    def positive(name: String, default: Int): Either[SettingsError, Int] = long(name, default, 1, Int.MaxValue).map(_.toInt)
    val level = str("LOG_LEVEL", "info").toLowerCase
    for {
      port    <- long("PORT", 8080, 0, 65535)
      metrics <- long("METRICS_PORT", DefaultMetricsPort, 1, 65535)
      _       <- Either.cond(metrics != port, (), SettingsError(s"METRICS_PORT must differ from PORT, got $metrics for both"))
      pool    <- long("DB_POOL_SIZE", 10, 1, 1000)
      acquire <- long("DB_ACQUIRE_TIMEOUT_MS", 1000, 1, 600000)
      ttl     <- long("TOKEN_TTL_SECONDS", 600, 1, 31536000)
      life    <- long("DB_MAX_LIFETIME_SECONDS", DefaultMaxLifetimeSeconds, MinMaxLifetimeSeconds, Int.MaxValue)
      idle    <- long("DB_IDLE_TIMEOUT_SECONDS", DefaultIdleTimeoutSeconds, MinIdleTimeoutSeconds, Int.MaxValue)
      _       <- Either.cond(idle < life, (), SettingsError(
                   s"DB_IDLE_TIMEOUT_SECONDS must be less than DB_MAX_LIFETIME_SECONDS, got $idle and $life"))
      _       <- Either.cond(Set("error", "warn", "info", "debug").contains(level), (),
                   SettingsError(s"LOG_LEVEL must be one of error, warn, info, debug, got '$level'"))
      db      <- parseDatabaseUrl(str("DATABASE_URL", "postgres://auth:auth@127.0.0.1:5432/auth"))
      issuer  <- checkIssuer(str("JWT_ISSUER", "http://localhost:8080"))
      client  <- checkDefaultClientId(env.get("DEFAULT_CLIENT_ID").filter(_.nonEmpty).getOrElse("public")) // empty = unset
      refresh <- positive("REFRESH_TTL_SECONDS", 2592000)
      maxFail <- positive("LOGIN_MAX_FAILURES", 10)
      window  <- positive("LOGIN_FAILURE_WINDOW_SECONDS", 300)
      ipFail  <- positive("LOGIN_IP_MAX_FAILURES", 100)
      maxLife <- positive("REFRESH_MAX_LIFETIME_SECONDS", LimitSettings.DefaultRefreshMaxLifetimeSeconds)
      _       <- Either.cond(maxLife >= refresh, (), SettingsError(
                   s"REFRESH_MAX_LIFETIME_SECONDS must not be less than REFRESH_TTL_SECONDS, got $maxLife and $refresh"))
      // An old configuration must not silently change meaning: TRUST_PROXY_HEADERS=true believed any peer's headers.
      _       <- Either.cond(str("TRUST_PROXY_HEADERS", "").isEmpty, (), SettingsError(
                   "TRUST_PROXY_HEADERS was replaced by TRUSTED_PROXIES (the proxies' addresses or CIDRs, comma-separated); unset it"))
      proxies <- TrustedProxies.parse(env.getOrElse("TRUSTED_PROXIES", "")).left.map(why => SettingsError(s"TRUSTED_PROXIES $why"))
      // The default only when unset: computing it touches Argon2Memory (see above), which a refused value must not.
      checks  <- if (str("MAX_PASSWORD_CHECKS", "").isEmpty) Right(LimitSettings.defaultMaxPasswordChecks(checksAtOnce))
                 else positive("MAX_PASSWORD_CHECKS", 1)
      // Last: loading the keys installs ACCP (its native library and self-tests), which a start refused for another
      // setting need not pay.
      keys    <- loadKeys(env)
    } yield Settings(
      host = str("HOST", "0.0.0.0"),
      port = port.toInt,
      database = db,
      dbPoolSize = pool.toInt,
      dbAcquireTimeoutMs = math.max(acquire, MinAcquireTimeoutMs),
      keySources = keys._1,
      keys = keys._2,
      issuer = issuer,
      audience = str("JWT_AUDIENCE", "channel-api"),
      tokenTtlSeconds = ttl,
      defaultClientId = client,
      logLevel = level,
      limits = LimitSettings(refresh, maxFail, window, ipFail, proxies, checks, maxLife),
      dbMaxLifetimeSeconds = life,
      dbIdleTimeoutSeconds = idle,
      metricsPort = metrics.toInt
    )
  }

  /** libpq's `sslmode` values this service accepts (`allow` is not: pgjdbc cannot honour it as libpq does). */
  val SslModes: List[String] = List("disable", "prefer", "require", "verify-ca", "verify-full")

  /**
   * postgres://user:pass@host:port/db?sslmode=..&sslrootcert=.. -> jdbc:postgresql://host:port/db, the TLS
   * parameters as pgjdbc properties (libpq's meanings, see [[tlsProperties]]), any other query parameter
   * passed on to the driver as it is.
   */
  def parseDatabaseUrl(url: String): Either[SettingsError, DatabaseSettings] = {
    def bad(why: String) = Left(SettingsError(s"DATABASE_URL is malformed: $why"))
    val uri =
      try Right(new URI(url))
      catch { case e: URISyntaxException => Left(e.getReason) }
    uri match {
      case Left(reason) => bad(reason)
      case Right(u) =>
        val scheme = Option(u.getScheme).map(_.toLowerCase)
        if (!scheme.contains("postgres") && !scheme.contains("postgresql"))
          bad("expected postgres://user:password@host:port/database")
        else if (u.getHost == null || u.getHost.isEmpty)
          bad("no host (or an invalid one)")
        else if (u.getPort > 65535) bad("port out of range")
        else {
          val port = if (u.getPort == -1) 5432 else u.getPort
          val rawDb = Option(u.getRawPath).map(_.stripPrefix("/")).getOrElse("")
          if (rawDb.contains("/")) bad("the path must be a single database name")
          else {
            val (user, password) = Option(u.getRawUserInfo) match {
              case None => (None, None)
              case Some(info) =>
                info.split(":", 2) match {
                  case Array(u0)     => (Some(decode(u0)), None)
                  case Array(u0, p0) => (Some(decode(u0)), Some(decode(p0)))
                  case _             => (None, None)
                }
            }
            val db = if (rawDb.isEmpty) user.getOrElse("postgres") else decode(rawDb)
            val params = Option(u.getRawQuery).filter(_.nonEmpty).toList.flatMap(_.split("&")).filter(_.nonEmpty)
            def named(name: String) = params.filter(p => p == name || p.startsWith(name + "=")).map(p => decode(p.drop(name.length + 1)))
            val others = params.filterNot(p => TlsParameters.exists(n => p == n || p.startsWith(n + "=")))
            val query = if (others.isEmpty) "" else others.mkString("?", "&", "")
            val jdbc = s"jdbc:postgresql://${u.getHost}:$port/${encodePathSegment(db)}$query"
            tlsProperties(named("sslmode"), named("sslrootcert"))
              .map(tls => DatabaseSettings(jdbc, user.filter(_.nonEmpty), password, tls))
          }
        }
    }
  }

  private val TlsParameters = List("sslmode", "sslrootcert")

  /**
   * libpq's `sslmode` and `sslrootcert` as pgjdbc connection properties.
   *
   *  - `prefer` (the default, as libpq) and `disable` map one to one; `require` without `sslrootcert` too
   *    (encrypted, not verified; pgjdbc fails rather than fall back to plain TCP).
   *  - `require` with `sslrootcert` verifies the chain (libpq's rule), which pgjdbc only does for
   *    `verify-ca`: so it becomes `verify-ca`.
   *  - `verify-ca`, `verify-full`: pgjdbc checks the chain against `sslrootcert`, and for `verify-full`
   *    the host name against the certificate's DNS and IP subject alternative names.
   *  - `sslrootcert=system`: the JVM's default trust store, through pgjdbc's `DefaultJavaSSLFactory`
   *    (whose JSSE trust manager always verifies the chain); pgjdbc still checks the host for `verify-full`.
   *
   * Refused: any other `sslmode` (`allow` included), `verify-ca`/`verify-full` without `sslrootcert`, a
   * parameter given twice, an `sslrootcert` file that cannot be read or holds no PEM certificate.
   */
  def tlsProperties(sslmodes: List[String], rootcerts: List[String]): Either[SettingsError, Map[String, String]] = {
    def refuse(why: String) = Left(SettingsError(s"DATABASE_URL: $why"))
    (sslmodes, rootcerts) match {
      case (_ :: _ :: _, _) => refuse("sslmode is given more than once")
      case (_, _ :: _ :: _) => refuse("sslrootcert is given more than once")
      case (mode :: Nil, _) if !SslModes.contains(mode) =>
        refuse(s"sslmode must be one of ${SslModes.mkString(", ")}; got '$mode'")
      case (mode :: Nil, Nil) if mode.startsWith("verify-") =>
        refuse(s"sslmode=$mode needs sslrootcert (a PEM file of CA certificates, or 'system')")
      case (modes, rootcert) =>
        val mode = modes.headOption.getOrElse("prefer")
        rootcert.headOption match {
          case None => Right(Map("sslmode" -> mode))
          case Some("system") =>
            Right(Map("sslmode" -> mode, "sslfactory" -> "org.postgresql.ssl.DefaultJavaSSLFactory"))
          case Some(path) =>
            readableCaFile(path).map { _ =>
              val pgjdbcMode = if (mode == "require") "verify-ca" else mode
              Map("sslmode" -> pgjdbcMode, "sslrootcert" -> path)
            }
        }
    }
  }

  private def readableCaFile(path: String): Either[SettingsError, Unit] = {
    def refuse(why: String) = Left(SettingsError(s"DATABASE_URL: sslrootcert $path $why"))
    val file = Paths.get(path)
    if (!Files.isRegularFile(file) || !Files.isReadable(file)) refuse("is not a readable file")
    else
      try {
        val in = new FileInputStream(file.toFile)
        val certificates = try CertificateFactory.getInstance("X.509").generateCertificates(in) finally in.close()
        if (certificates.isEmpty) refuse("holds no PEM certificate") else Right(())
      } catch { case NonFatal(e) => refuse(s"cannot be read as PEM certificates (${e.getClass.getSimpleName})") }
  }

  private def decode(s: String): String = URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8)
  private def encodePathSegment(s: String): String =
    java.net.URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20")

  /**
   * The key sources of the environment and what they hold now: `JWT_PRIVATE_KEY_FILE` (read again on every
   * reload) or else `JWT_PRIVATE_KEY` (inline, so fixed), and the optional `JWT_PUBLIC_KEYS_FILE`.
   */
  private def loadKeys(env: Map[String, String]): Either[SettingsError, (KeySources, KeyMaterial)] = {
    val file = env.get("JWT_PRIVATE_KEY_FILE").map(_.trim).filter(_.nonEmpty)
    val inline = env.get("JWT_PRIVATE_KEY").filter(_.trim.nonEmpty)
    val source: Either[SettingsError, PrivateKeySource] = (file, inline) match {
      case (Some(path), _)    => Right(PrivateKeySource.File(path))
      case (None, Some(text)) => Right(PrivateKeySource.Inline(text))
      case (None, None) =>
        Left(SettingsError("no signing key: set JWT_PRIVATE_KEY_FILE (path to a PKCS#8 PEM key: RSA, EC P-256 or Ed25519) " +
          "or JWT_PRIVATE_KEY (the PEM itself)"))
    }
    val publicKeys = env.get("JWT_PUBLIC_KEYS_FILE").map(_.trim).filter(_.nonEmpty)
    source.map(KeySources(_, publicKeys)).flatMap(sources => sources.load().map(sources -> _))
  }

  /** `JWT_ISSUER`: an absolute http or https URL with a host and no query or fragment (contract §5). */
  def checkIssuer(issuer: String): Either[SettingsError, String] = {
    def refuse(why: String) =
      Left(SettingsError(s"JWT_ISSUER must be an absolute http or https URL with a host and no query or fragment ($why): '$issuer'"))
    try {
      val uri = new URI(issuer)
      val scheme = Option(uri.getScheme).map(_.toLowerCase)
      if (!scheme.contains("http") && !scheme.contains("https")) refuse("not http or https")
      else if (uri.getHost == null || uri.getHost.isEmpty) refuse("no host")
      else if (uri.getRawQuery != null || issuer.contains("?")) refuse("has a query")
      else if (uri.getRawFragment != null || issuer.contains("#")) refuse("has a fragment")
      else Right(issuer)
    } catch { case e: URISyntaxException => refuse(e.getReason) }
  }

  /** `DEFAULT_CLIENT_ID`: the rule of a request's `client_id` (1-128 printable ASCII). */
  def checkDefaultClientId(clientId: String): Either[SettingsError, String] =
    TokenRequest.clientIdProblem(clientId) match {
      case Some(problem) => Left(SettingsError(s"DEFAULT_CLIENT_ID $problem"))
      case None          => Right(clientId)
    }
}
