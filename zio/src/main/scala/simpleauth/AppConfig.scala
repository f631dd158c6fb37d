package simpleauth

import java.net.{URI, URISyntaxException, URLDecoder}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}

import zio.*

/** JDBC settings derived from a libpq-style `DATABASE_URL`. */
final case class JdbcSettings(url: String, user: Option[String], password: Option[String]):
  /** Where we connect, for log lines: never the password. */
  def display: String = url.takeWhile(_ != '?')

/** Everything the service reads from the environment (contract §5). */
final case class AppConfig(
    host: String,
    port: Int,
    database: JdbcSettings,
    poolSize: Int,
    acquireTimeoutMs: Long,
    privateKeyPem: Config.Secret,
    issuer: String,
    audience: String,
    tokenTtlSeconds: Long,
    logLevel: LogLevel
)

object AppConfig:
  val DefaultDatabaseUrl = "postgres://auth:auth@127.0.0.1:5432/auth"

  /** A refused start: one line on stderr, non-zero exit. */
  final case class StartupError(message: String) extends Exception(message, null, false, false):
    /** The line printed on stderr (by the service and by `SignBench` alike). */
    def line: String = s"simple-auth-zio: $message"

  private def positiveInt(name: String, default: Int): Config[Int] =
    Config.int(name).withDefault(default).validate(s"$name must be > 0")(_ > 0)

  private val keyConfig: Config[Config.Secret] =
    (Config.string("JWT_PRIVATE_KEY_FILE").optional ++ Config.secret("JWT_PRIVATE_KEY").optional).mapOrFail {
      case (Some(file), _) if file.trim.nonEmpty =>
        try Right(Config.Secret(Files.readString(Path.of(file.trim), StandardCharsets.UTF_8)))
        catch case e: Exception => Left(Config.Error.InvalidData(Chunk("JWT_PRIVATE_KEY_FILE"), s"cannot read $file (${e.getClass.getSimpleName})"))
      case (_, Some(inline)) if inline.stringValue.trim.nonEmpty => Right(inline)
      case _ =>
        Left(Config.Error.MissingData(Chunk("JWT_PRIVATE_KEY_FILE"), "one of JWT_PRIVATE_KEY_FILE or JWT_PRIVATE_KEY is required"))
    }

  private val logLevelConfig: Config[LogLevel] =
    Config.string("LOG_LEVEL").withDefault("info").mapOrFail { s =>
      s.trim.toLowerCase match
        case "error"           => Right(LogLevel.Error)
        case "warn" | "warning" => Right(LogLevel.Warning)
        case "info"            => Right(LogLevel.Info)
        case "debug" | "trace" => Right(LogLevel.Debug)
        case other             => Left(Config.Error.InvalidData(Chunk("LOG_LEVEL"), s"unknown level '$other' (error, warn, info, debug)"))
    }

  val config: Config[AppConfig] =
    (Config.string("HOST").withDefault("0.0.0.0") ++
      Config.int("PORT").withDefault(8080).validate("PORT must be 0..65535")(p => p >= 0 && p <= 65535) ++
      Config.string("DATABASE_URL").withDefault(DefaultDatabaseUrl).mapOrFail(u =>
        parseDatabaseUrl(u).left.map(msg => Config.Error.InvalidData(Chunk("DATABASE_URL"), msg))
      ) ++
      positiveInt("DB_POOL_SIZE", 10) ++
      positiveInt("DB_ACQUIRE_TIMEOUT_MS", 1000).map(_.toLong) ++
      keyConfig ++
      Config.string("JWT_ISSUER").withDefault("http://localhost:8080") ++
      Config.string("JWT_AUDIENCE").withDefault("channel-api") ++
      positiveInt("TOKEN_TTL_SECONDS", 600).map(_.toLong) ++
      logLevelConfig).map(AppConfig.apply.tupled)

  /** Reads the environment; any problem becomes one readable line. */
  val load: IO[StartupError, AppConfig] =
    ZIO.config(config).mapError(e => StartupError(s"invalid configuration: ${describe(e)}"))

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

  /** `postgres://user:pass@host:port/db?params` -> `jdbc:postgresql://host:port/db?params` + user/password properties. */
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
        Option(u.getRawPath).map(_.stripPrefix("/")).filter(_.nonEmpty).orElse(user) match
          case None                        => Left(s"$bad: no database name")
          case Some(d) if d.contains("/") => Left(s"$bad: bad database name")
          case Some(d) =>
            val port  = if u.getPort == -1 then 5432 else u.getPort
            val query = Option(u.getRawQuery).filter(_.nonEmpty).map("?" + _).getOrElse("")
            Right(JdbcSettings(s"jdbc:postgresql://${u.getHost}:$port/$d$query", user, password))
    catch
      case _: URISyntaxException | _: IllegalArgumentException => Left(bad)
