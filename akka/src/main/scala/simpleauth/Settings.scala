package simpleauth

import java.net.{URI, URISyntaxException, URLDecoder}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}
import java.security.KeyFactory
import java.security.interfaces.{RSAPrivateCrtKey, RSAPublicKey}
import java.security.spec.{PKCS8EncodedKeySpec, RSAPublicKeySpec}
import java.util.Base64
import scala.util.control.NonFatal

/** Where and how to reach PostgreSQL, translated from a libpq URL to JDBC. */
final case class DatabaseSettings(jdbcUrl: String, user: Option[String], password: Option[String]) {
  override def toString: String = s"DatabaseSettings($jdbcUrl, user=${user.getOrElse("-")}, password=***)"
}

final case class SigningKey(privateKey: RSAPrivateCrtKey, publicKey: RSAPublicKey) {
  override def toString: String = s"SigningKey(RSA ${publicKey.getModulus.bitLength} bits)"
}

/** Everything the service reads from its environment (contract §5), validated up front. */
final case class Settings(
    host: String,
    port: Int,
    database: DatabaseSettings,
    dbPoolSize: Int,
    dbAcquireTimeoutMs: Long,
    key: SigningKey,
    issuer: String,
    audience: String,
    tokenTtlSeconds: Long,
    logLevel: String
)

object Settings {
  final case class ConfigError(message: String)

  private val MinAcquireTimeoutMs = 250L // HikariCP's floor for connectionTimeout
  private val MinKeyBits = 2048

  def fromEnv(env: Map[String, String] = sys.env): Either[ConfigError, Settings] = {
    def str(name: String, default: String): String =
      env.get(name).map(_.trim).filter(_.nonEmpty).getOrElse(default)
    def long(name: String, default: Long, min: Long, max: Long): Either[ConfigError, Long] = {
      val raw = str(name, default.toString)
      raw.toLongOption.filter(v => v >= min && v <= max)
        .toRight(ConfigError(s"$name must be an integer between $min and $max, got '$raw'"))
    }
    val level = str("LOG_LEVEL", "info").toLowerCase
    for {
      port    <- long("PORT", 8080, 0, 65535)
      pool    <- long("DB_POOL_SIZE", 10, 1, 1000)
      acquire <- long("DB_ACQUIRE_TIMEOUT_MS", 1000, 1, 600000)
      ttl     <- long("TOKEN_TTL_SECONDS", 600, 1, 31536000)
      _       <- Either.cond(Set("error", "warn", "info", "debug").contains(level), (),
                   ConfigError(s"LOG_LEVEL must be one of error, warn, info, debug, got '$level'"))
      db      <- parseDatabaseUrl(str("DATABASE_URL", "postgres://auth:auth@127.0.0.1:5432/auth"))
      key     <- loadKey(env)
    } yield Settings(
      host = str("HOST", "0.0.0.0"),
      port = port.toInt,
      database = db,
      dbPoolSize = pool.toInt,
      dbAcquireTimeoutMs = math.max(acquire, MinAcquireTimeoutMs),
      key = key,
      issuer = str("JWT_ISSUER", "http://localhost:8080"),
      audience = str("JWT_AUDIENCE", "channel-api"),
      tokenTtlSeconds = ttl,
      logLevel = level
    )
  }

  /** postgres://user:pass@host:port/db?sslmode=disable -> jdbc:postgresql://host:port/db?sslmode=disable */
  def parseDatabaseUrl(url: String): Either[ConfigError, DatabaseSettings] = {
    def bad(why: String) = Left(ConfigError(s"DATABASE_URL is malformed: $why"))
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
            val query = Option(u.getRawQuery).filter(_.nonEmpty).map("?" + _).getOrElse("")
            val jdbc = s"jdbc:postgresql://${u.getHost}:$port/${encodePathSegment(db)}$query"
            Right(DatabaseSettings(jdbc, user.filter(_.nonEmpty), password))
          }
        }
    }
  }

  private def decode(s: String): String = URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8)
  private def encodePathSegment(s: String): String =
    java.net.URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20")

  private def loadKey(env: Map[String, String]): Either[ConfigError, SigningKey] = {
    val file = env.get("JWT_PRIVATE_KEY_FILE").map(_.trim).filter(_.nonEmpty)
    val inline = env.get("JWT_PRIVATE_KEY").filter(_.trim.nonEmpty)
    val pem: Either[ConfigError, (String, String)] = (file, inline) match {
      case (Some(path), _) =>
        try Right((new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.US_ASCII), s"JWT_PRIVATE_KEY_FILE ($path)"))
        catch { case NonFatal(e) => Left(ConfigError(s"JWT_PRIVATE_KEY_FILE cannot be read: $path (${e.getClass.getSimpleName})")) }
      case (None, Some(text)) =>
        // Secret stores often flatten newlines to a literal "\n".
        Right((text.replace("\\n", "\n"), "JWT_PRIVATE_KEY"))
      case (None, None) =>
        Left(ConfigError("no signing key: set JWT_PRIVATE_KEY_FILE (path to a PKCS#8 PEM RSA key) or JWT_PRIVATE_KEY (the PEM itself)"))
    }
    pem.flatMap { case (text, source) => parsePkcs8RsaKey(text).left.map(e => ConfigError(s"$source: ${e.message}")) }
  }

  def parsePkcs8RsaKey(pem: String): Either[ConfigError, SigningKey] = {
    val Begin = "-----BEGIN PRIVATE KEY-----"
    val End = "-----END PRIVATE KEY-----"
    if (pem.contains("-----BEGIN RSA PRIVATE KEY-----"))
      Left(ConfigError("PKCS#1 key (BEGIN RSA PRIVATE KEY) refused; convert it with `openssl pkcs8 -topk8 -nocrypt`"))
    else if (pem.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
      Left(ConfigError("encrypted PKCS#8 keys are not supported; give an unencrypted PKCS#8 PEM (BEGIN PRIVATE KEY)"))
    else {
      val start = pem.indexOf(Begin)
      val end = pem.indexOf(End)
      if (start < 0 || end < start) Left(ConfigError("not a PKCS#8 PEM private key (expected BEGIN PRIVATE KEY)"))
      else {
        val body = pem.substring(start + Begin.length, end).filterNot(_.isWhitespace)
        try {
          val der = Base64.getDecoder.decode(body)
          KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(der)) match {
            case k: RSAPrivateCrtKey =>
              val bits = k.getModulus.bitLength
              if (bits < MinKeyBits) Left(ConfigError(s"RSA key has $bits bits; at least $MinKeyBits are required"))
              else {
                val pub = KeyFactory.getInstance("RSA")
                  .generatePublic(new RSAPublicKeySpec(k.getModulus, k.getPublicExponent))
                  .asInstanceOf[RSAPublicKey]
                Right(SigningKey(k, pub))
              }
            case _ => Left(ConfigError("RSA key without CRT parameters is not supported"))
          }
        } catch {
          case NonFatal(_) => Left(ConfigError("not an RSA private key in PKCS#8 form (EC and other key types are refused)"))
        }
      }
    }
  }
}
