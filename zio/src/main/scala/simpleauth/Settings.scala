package simpleauth

import java.net.{URI, URISyntaxException, URLDecoder}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}

import zio.*

/**
 * JDBC settings derived from a libpq-style `DATABASE_URL`. `properties` are pgjdbc connection properties (the TLS
 * settings), given to the pool and to the pool's recovery probe alike.
 */
final case class JdbcSettings(url: String, user: Option[String], password: Option[String], properties: Map[String, String] = Map.empty):
  /** Where we connect, for log lines: never the password. */
  def display: String = url.takeWhile(_ != '?')

/** A refused start: one line on stderr and exit code 2 (the service and `SignBench` alike). */
final case class SettingsError(message: String) extends Exception(message, null, false, false):
  /** The line printed on stderr. */
  def line: String = s"simple-auth-zio: $message"

/** Everything the service reads from the environment (contract §5). */
final case class Settings(
    host: String,
    port: Int,
    database: JdbcSettings,
    poolSize: Int,
    acquireTimeoutMs: Long,
    privateKeyPem: Config.Secret,
    /** `JWT_PUBLIC_KEYS_FILE`'s contents at start, if it is set. */
    publicKeysPem: Option[String],
    issuer: String,
    audience: String,
    tokenTtlSeconds: Long,
    defaultClientId: String,
    logLevel: LogLevel,
    /** Where the two come from: read again on SIGHUP (§5 "Key rotation"). */
    keySource: KeySource = KeySource(None, None, None),
    /** Sessions and limits (§7, §8); the defaults are the contract's. */
    limits: LimitSettings = LimitSettings()
)

/**
 * The settings of sessions and login limits (contract §5, §7, §8): `REFRESH_TTL_SECONDS`, `LOGIN_MAX_FAILURES`,
 * `LOGIN_FAILURE_WINDOW_SECONDS`, `LOGIN_IP_MAX_FAILURES`, `TRUST_PROXY_HEADERS`, `MAX_PASSWORD_CHECKS`.
 */
final case class LimitSettings(
    refreshTtlSeconds: Int = 2_592_000,
    loginMaxFailures: Int = 10,
    loginFailureWindowSeconds: Int = 300,
    loginIpMaxFailures: Int = 100,
    trustProxyHeaders: Boolean = false,
    maxPasswordChecks: Int = LimitSettings.defaultMaxPasswordChecks()
)

object LimitSettings:
  /**
   * 4 × the argon2id checks this process runs at once (spec/README.md §8): one per core, fewer where the heap bounds
   * them (`Argon2Memory.checksAtOnce`: one on the 96 MiB heap), so that the wait behind the admitted checks stays at
   * about four argon2id times.
   */
  def defaultMaxPasswordChecks(checksAtOnce: Int = Argon2Memory.checksAtOnce): Int = 4 * checksAtOnce

/**
 * Where the signing key and the public-key bundle come from (contract §5). Read at start and again on SIGHUP; an
 * inline `JWT_PRIVATE_KEY` cannot change in a running process, so a reload takes it again as it was.
 */
final case class KeySource(privateKeyFile: Option[String], inlinePrivateKey: Option[Config.Secret], publicKeysFile: Option[String]):
  def readPrivateKey: Either[String, Config.Secret] =
    (privateKeyFile, inlinePrivateKey) match
      case (Some(file), _) =>
        KeySource.read(file).map(Config.Secret(_)).left.map(why => s"JWT_PRIVATE_KEY_FILE: $why")
      // Secret stores often flatten a PEM to one line: a literal two-character `\n` is read as a newline.
      case (None, Some(inline)) => Right(Config.Secret(inline.stringValue.replace("\\n", "\n")))
      case (None, None)         => Left("one of JWT_PRIVATE_KEY_FILE or JWT_PRIVATE_KEY is required")

  def readPublicKeys: Either[String, Option[String]] =
    publicKeysFile match
      case None       => Right(None)
      case Some(file) => KeySource.read(file).map(Some(_)).left.map(why => s"JWT_PUBLIC_KEYS_FILE: $why")

object KeySource:
  private def read(file: String): Either[String, String] =
    try Right(Files.readString(Path.of(file), StandardCharsets.UTF_8))
    catch case e: Exception => Left(s"cannot read $file (${e.getClass.getSimpleName})")

object Settings:
  val DefaultDatabaseUrl = "postgres://auth:auth@127.0.0.1:5432/auth"

  /**
   * A positive 32-bit integer; anything else (0, negative, not a number, beyond 2^31 - 1) refused naming the variable.
   * `emptyIsUnset`: set but empty means the default (the settings of §7/§8, which compose files pass as `${X:-}`).
   */
  private def positiveInt(name: String, default: Int, emptyIsUnset: Boolean = false): Config[Int] =
    Config.string(name).withDefault(default.toString).mapOrFail {
      case "" if emptyIsUnset => Right(default)
      case s => s.toIntOption.filter(_ > 0).toRight(Config.Error.InvalidData(Chunk(name), s"must be a positive integer, not '$s'"))
    }

  private def nonBlank(name: String): Config[Option[String]] =
    Config.string(name).optional.map(_.map(_.trim).filter(_.nonEmpty))

  private val keySourceConfig: Config[KeySource] =
    (nonBlank("JWT_PRIVATE_KEY_FILE") ++ Config.secret("JWT_PRIVATE_KEY").optional ++ nonBlank("JWT_PUBLIC_KEYS_FILE")).map {
      case (file, inline, bundle) => KeySource(file, inline.filter(_.stringValue.trim.nonEmpty), bundle)
    }

  /** The key source, its two files read once for the start (a file that cannot be read refuses the start). */
  private val keyConfig: Config[(Config.Secret, Option[String], KeySource)] =
    keySourceConfig.mapOrFail { source =>
      def variable(why: String) = if why.startsWith("JWT_PUBLIC_KEYS_FILE") then "JWT_PUBLIC_KEYS_FILE" else "JWT_PRIVATE_KEY_FILE"
      def error(why: String): Config.Error =
        if source.privateKeyFile.isEmpty && source.inlinePrivateKey.isEmpty then Config.Error.MissingData(Chunk("JWT_PRIVATE_KEY_FILE"), why)
        else Config.Error.InvalidData(Chunk(variable(why)), why.stripPrefix(s"${variable(why)}: "))
      (for
        key    <- source.readPrivateKey
        bundle <- source.readPublicKeys
      yield (key, bundle, source)).left.map(error)
    }

  /**
   * `JWT_ISSUER` (§5): an absolute http or https URL with a host and no query or fragment, since the discovery
   * document's URLs are made from it.
   */
  def issuerProblem(issuer: String): Option[String] =
    val rule = "must be an absolute http or https URL with a host and no query or fragment"
    try
      val u = new URI(issuer)
      val scheme = Option(u.getScheme).map(_.toLowerCase)
      if !scheme.contains("http") && !scheme.contains("https") then Some(s"'$issuer' $rule")
      else if u.isOpaque || u.getRawAuthority == null || u.getHost == null || u.getHost.isEmpty then Some(s"'$issuer' has no host; it $rule")
      else if u.getRawQuery != null then Some(s"'$issuer' has a query; it $rule")
      else if u.getRawFragment != null then Some(s"'$issuer' has a fragment; it $rule")
      else None
    catch case _: URISyntaxException => Some(s"'$issuer' is not a URL; it $rule")

  private val issuerConfig: Config[String] =
    Config.string("JWT_ISSUER").withDefault("http://localhost:8080").mapOrFail(i =>
      issuerProblem(i).map(p => Config.Error.InvalidData(Chunk("JWT_ISSUER"), p)).toLeft(i)
    )

  private val defaultClientIdConfig: Config[String] =
    // Set but empty counts as unset (spec/README.md §5), as a compose file's ${DEFAULT_CLIENT_ID:-} gives it.
    Config.string("DEFAULT_CLIENT_ID").withDefault("public").map(id => if id.isEmpty then "public" else id).mapOrFail(id =>
      if TokenRequest.isValidClientId(id) then Right(id)
      else Left(Config.Error.InvalidData(Chunk("DEFAULT_CLIENT_ID"), TokenRequest.ClientIdRule))
    )

  /** `TRUST_PROXY_HEADERS`: `true` or `false` (case and surrounding blanks aside; empty is the default), nothing else. */
  private val trustProxyHeadersConfig: Config[Boolean] =
    Config.string("TRUST_PROXY_HEADERS").withDefault("false").mapOrFail { s =>
      s.trim.toLowerCase match
        case "true"           => Right(true)
        case "false" | ""     => Right(false) // set but empty: the default
        case other   => Left(Config.Error.InvalidData(Chunk("TRUST_PROXY_HEADERS"), s"must be true or false, not '$other'"))
    }

  private def limitsConfig(checksAtOnce: Int): Config[LimitSettings] =
    (positiveInt("REFRESH_TTL_SECONDS", 2_592_000, emptyIsUnset = true) ++
      positiveInt("LOGIN_MAX_FAILURES", 10, emptyIsUnset = true) ++
      positiveInt("LOGIN_FAILURE_WINDOW_SECONDS", 300, emptyIsUnset = true) ++
      positiveInt("LOGIN_IP_MAX_FAILURES", 100, emptyIsUnset = true) ++
      trustProxyHeadersConfig ++
      positiveInt("MAX_PASSWORD_CHECKS", LimitSettings.defaultMaxPasswordChecks(checksAtOnce), emptyIsUnset = true)).map {
      case (refreshTtl, maxFailures, window, ipMaxFailures, trust, maxChecks) =>
        LimitSettings(refreshTtl, maxFailures, window, ipMaxFailures, trust, maxChecks)
    }

  /** A LOG_LEVEL value, case and surrounding blanks aside; None for an unknown one. */
  def parseLogLevel(value: String): Option[LogLevel] =
    value.trim.toLowerCase match
      case "error"            => Some(LogLevel.Error)
      case "warn" | "warning" => Some(LogLevel.Warning)
      case "info"             => Some(LogLevel.Info)
      case "debug" | "trace"  => Some(LogLevel.Debug)
      case _                  => None

  private val logLevelConfig: Config[LogLevel] =
    Config.string("LOG_LEVEL").withDefault("info").mapOrFail { s =>
      parseLogLevel(s).toRight(
        Config.Error.InvalidData(Chunk("LOG_LEVEL"), s"unknown level '${s.trim.toLowerCase}' (error, warn, info, debug)"))
    }

  /** The settings of a process that runs `checksAtOnce` argon2id checks at once (the default of MAX_PASSWORD_CHECKS). */
  def config(checksAtOnce: Int): Config[Settings] =
    (Config.string("HOST").withDefault("0.0.0.0") ++
      Config.int("PORT").withDefault(8080).validate("PORT must be 0..65535")(p => p >= 0 && p <= 65535) ++
      Config.string("DATABASE_URL").withDefault(DefaultDatabaseUrl).mapOrFail(u =>
        parseDatabaseUrl(u).left.map(msg => Config.Error.InvalidData(Chunk("DATABASE_URL"), msg))
      ) ++
      positiveInt("DB_POOL_SIZE", 10) ++
      positiveInt("DB_ACQUIRE_TIMEOUT_MS", 1000).map(_.toLong) ++
      keyConfig ++
      issuerConfig ++
      Config.string("JWT_AUDIENCE").withDefault("channel-api") ++
      positiveInt("TOKEN_TTL_SECONDS", 600).map(_.toLong) ++
      defaultClientIdConfig ++
      logLevelConfig ++
      limitsConfig(checksAtOnce)).map {
      case (host, port, database, poolSize, acquireTimeoutMs, (key, bundle, source), issuer, audience, ttl, clientId, level, limits) =>
        Settings(host, port, database, poolSize, acquireTimeoutMs, key, bundle, issuer, audience, ttl, clientId, level, source, limits)
    }

  /** Reads the environment; any problem becomes one readable line. */
  val load: IO[SettingsError, Settings] = loadFor(Argon2Memory.checksAtOnce)

  /** `load` for a process that runs `checksAtOnce` argon2id checks at once. */
  def loadFor(checksAtOnce: Int): IO[SettingsError, Settings] =
    ZIO.config(config(checksAtOnce)).mapError(e => SettingsError(s"invalid configuration: ${describe(e)}"))

  private def describe(e: Config.Error): String = e match
    case Config.Error.And(l, r)               => s"${describe(l)}; ${describe(r)}"
    // The default provider is "environment, else system properties": report the environment's side.
    case Config.Error.Or(l, _: Config.Error.MissingData) => describe(l)
    case Config.Error.Or(_: Config.Error.MissingData, r) => describe(r)
    case Config.Error.Or(l, r)                => s"${describe(l)}; ${describe(r)}"
    case Config.Error.InvalidData(path, msg)  => s"${path.mkString("_").toUpperCase}: $msg"
    case Config.Error.MissingData(path, msg)  => msg
    case Config.Error.SourceUnavailable(_, m, _) => m
    case Config.Error.Unsupported(_, m)       => m

  /** libpq's `sslmode` values we honour; `allow` is refused (pgjdbc and tokio-postgres cannot honour it alike). */
  val SslModes: List[String] = List("disable", "prefer", "require", "verify-ca", "verify-full")

  /**
   * `postgres://user:pass@host:port/db?params` -> `jdbc:postgresql://host:port/db?params` + user/password, with
   * libpq's TLS parameters turned into pgjdbc properties (see `tlsProperties`); other parameters pass through.
   */
  def parseDatabaseUrl(raw: String): Either[String, JdbcSettings] =
    val bad = "malformed DATABASE_URL (expected postgres://user:password@host:port/database)"
    try
      val u      = new URI(raw.trim)
      val scheme = Option(u.getScheme).map(_.toLowerCase)
      def dec(x: String) = URLDecoder.decode(x.replace("+", "%2B"), StandardCharsets.UTF_8)
      if !scheme.contains("postgres") && !scheme.contains("postgresql") then Left(s"$bad: scheme must be postgres://")
      else if u.getHost == null || u.getHost.isEmpty then Left(s"$bad: no host")
      else if u.getPort == 0 || u.getPort > 65535 then Left(s"$bad: bad port")
      else
        val (user, password) = Option(u.getRawUserInfo).filter(_.nonEmpty) match
          case None => (None, None)
          case Some(info) =>
            info.indexOf(':') match
              case -1 => (Some(dec(info)), None)
              case i  => (Some(dec(info.substring(0, i))), Some(dec(info.substring(i + 1))))
        val params = Option(u.getRawQuery).filter(_.nonEmpty).toList.flatMap(_.split('&')).filter(_.nonEmpty).map { p =>
          p.indexOf('=') match
            case -1 => (dec(p), p, "")
            case i  => (dec(p.substring(0, i)), p, dec(p.substring(i + 1)))
        }
        def param(name: String): Option[String] = params.reverse.collectFirst { case (`name`, _, v) => v }
        Option(u.getRawPath).map(_.stripPrefix("/")).filter(_.nonEmpty).orElse(user) match
          case None                        => Left(s"$bad: no database name")
          case Some(d) if d.contains("/") => Left(s"$bad: bad database name")
          case Some(d) =>
            tlsProperties(param("sslmode"), param("sslrootcert")).map { props =>
              val port  = if u.getPort == -1 then 5432 else u.getPort
              val rest  = params.collect { case (k, rawParam, _) if k != "sslmode" && k != "sslrootcert" => rawParam }
              val query = if rest.isEmpty then "" else rest.mkString("?", "&", "")
              JdbcSettings(s"jdbc:postgresql://${u.getHost}:$port/$d$query", user, password, props)
            }
    catch
      case _: URISyntaxException | _: IllegalArgumentException => Left(bad)

  /**
   * libpq's `sslmode`/`sslrootcert` as pgjdbc properties, with libpq's meanings (pgjdbc's own differ in places):
   *  - `prefer` (the default, as in libpq) and `disable` map one to one; `prefer` encrypts when the server offers
   *    TLS and does not verify.
   *  - `require` without `sslrootcert` encrypts without verifying (pgjdbc's `require` does exactly that and never
   *    falls back to plain TCP); with `sslrootcert` libpq verifies the chain, so it becomes pgjdbc's `verify-ca`.
   *  - `verify-ca` / `verify-full` need `sslrootcert`: pgjdbc would otherwise look for `~/.postgresql/root.crt`.
   *    `verify-full` makes pgjdbc check the host name against the certificate's DNS and IP SANs.
   *  - `sslrootcert=system` uses the JDK's trust store (`DefaultJavaSSLFactory`); a path must be a readable PEM file
   *    with at least one certificate, checked here so a bad file stops the start instead of failing every connect.
   */
  def tlsProperties(sslmode: Option[String], sslrootcert: Option[String]): Either[String, Map[String, String]] =
    val mode = sslmode.getOrElse("prefer")
    if !SslModes.contains(mode) then
      Left(s"unsupported sslmode '$mode' (accepted: ${SslModes.mkString(", ")})")
    else
      val root: Either[String, Option[Map[String, String]]] = sslrootcert match
        case None | Some("") => Right(None)
        case Some("system")  => Right(Some(Map("sslfactory" -> "org.postgresql.ssl.DefaultJavaSSLFactory")))
        case Some(path)      => readableCaFile(path).map(_ => Some(Map("sslrootcert" -> path)))
      root.flatMap {
        case None if mode.startsWith("verify-") =>
          Left(s"sslmode=$mode needs sslrootcert (a PEM file of CA certificates, or 'system')")
        case None                               => Right(Map("sslmode" -> mode))
        case Some(ca) if mode == "require"      => Right(ca + ("sslmode" -> "verify-ca"))
        case Some(ca) if mode.startsWith("verify-") => Right(ca + ("sslmode" -> mode))
        case Some(_)                            => Right(Map("sslmode" -> mode)) // disable / prefer: nothing is verified
      }

  private def readableCaFile(path: String): Either[String, Unit] =
    try
      val in = Files.newInputStream(Path.of(path))
      try
        val certs = java.security.cert.CertificateFactory.getInstance("X.509").generateCertificates(in)
        if certs.isEmpty then Left(s"sslrootcert $path holds no certificate") else Right(())
      finally in.close()
    catch
      case e: java.io.IOException =>
        Left(s"cannot read sslrootcert $path (${e.getClass.getSimpleName})")
      case _: java.security.cert.CertificateException | _: java.nio.file.InvalidPathException =>
        Left(s"sslrootcert $path is not a PEM file of CA certificates")
