package simpleauth

import zio.*
import zio.test.*

/** A self-signed CA certificate (test data only: nothing trusts it). */
object TestCa:
  lazy val pem: String =
    val dir = java.nio.file.Files.createTempDirectory("ca")
    val key = dir.resolve("ca.key"); val crt = dir.resolve("ca.pem")
    val p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key.toString,
      "-out", crt.toString, "-days", "1", "-subj", "/CN=simple-auth test CA").redirectErrorStream(true).start()
    p.getInputStream.readAllBytes(); p.waitFor()
    java.nio.file.Files.readString(crt)

object SettingsSpec extends ZIOSpecDefault:
  import Settings.parseDatabaseUrl

  /** The environment a start sees, with the dev key inline in `key`'s form. */
  private def withInlineKey(key: String) =
    ConfigProvider.fromMap(Map("JWT_PRIVATE_KEY" -> key, "DATABASE_URL" -> "postgres://auth:auth@127.0.0.1:1/auth"))

  def spec = suite("Settings")(inlineKey, issuerAndClientId, limits, databaseUrl)

  private val devKid = Vectors.keys.find(_.file.endsWith("dev-rsa-2048.pem")).get.kid

  private def inlineKey = suite("JWT_PRIVATE_KEY")(
    test("a literal \\n in the inline PEM is read as a newline (secret stores flatten PEMs); real newlines work too") {
      val flattened = Vectors.devKeyPem.replace("\n", "\\n")
      for
        fromFlat  <- Settings.load.withConfigProvider(withInlineKey(flattened))
        fromLines <- Settings.load.withConfigProvider(withInlineKey(Vectors.devKeyPem))
      yield assertTrue(
        !flattened.contains("\n"),
        fromFlat.privateKeyPem.stringValue == Vectors.devKeyPem,
        SigningKeys.loadSigningKey(fromFlat.privateKeyPem.stringValue).map(_.kid) == Right(devKid),
        SigningKeys.loadSigningKey(fromLines.privateKeyPem.stringValue).map(_.kid) == Right(devKid)
      )
    },
    test("a refused setting is one line naming the variable") {
      for refused <- Settings.load.flip.withConfigProvider(ConfigProvider.fromMap(Map("PORT" -> "99999", "JWT_PRIVATE_KEY" -> Vectors.devKeyPem)))
      yield assertTrue(refused.line.startsWith("simple-auth-zio: invalid configuration: "), refused.line.contains("PORT"), !refused.line.contains("\n"))
    }
  )

  private def withKey(entries: (String, String)*) =
    ConfigProvider.fromMap(Map("JWT_PRIVATE_KEY" -> Vectors.devKeyPem) ++ entries)

  private def refusal(entries: (String, String)*): UIO[String] =
    Settings.load.flip.map(_.line).orElseSucceed("(accepted)").withConfigProvider(withKey(entries*))

  private def issuerAndClientId = suite("JWT_ISSUER, DEFAULT_CLIENT_ID, JWT_PUBLIC_KEYS_FILE")(
    test("JWT_ISSUER: an absolute http(s) URL with a host and no query or fragment, else refused naming the variable") {
      val refused = List("not a url", "issuer.example.test", "ftp://issuer.example.test", "https://", "https://issuer.example.test/?tenant=1",
        "https://issuer.example.test/#x", "/relative/path", "http:opaque", "https://?x")
      for
        lines <- ZIO.foreach(refused)(i => refusal("JWT_ISSUER" -> i))
        ok    <- ZIO.foreach(List("http://localhost:8080", "https://login.example.test/tenant-1/", "HTTPS://Issuer.Example.Test:8443/a/b"))(i =>
                   Settings.load.map(_.issuer).withConfigProvider(withKey("JWT_ISSUER" -> i)))
        dflt  <- Settings.load.map(_.issuer).withConfigProvider(withKey())
      yield assertTrue(
        lines.forall(l => l.startsWith("simple-auth-zio: invalid configuration: JWT_ISSUER: ") && !l.contains("\n")),
        ok == List("http://localhost:8080", "https://login.example.test/tenant-1/", "HTTPS://Issuer.Example.Test:8443/a/b"),
        dflt == "http://localhost:8080"
      )
    },
    test("DEFAULT_CLIENT_ID: `public` by default or set but empty, 1-128 printable ASCII, else refused naming the variable") {
      for
        lines <- ZIO.foreach(List("x" * 129, "tab\there", "caf\u00e9"))(c => refusal("DEFAULT_CLIENT_ID" -> c))
        dflt  <- Settings.load.map(_.defaultClientId).withConfigProvider(withKey())
        empty <- Settings.load.map(_.defaultClientId).withConfigProvider(withKey("DEFAULT_CLIENT_ID" -> ""))
        set   <- Settings.load.map(_.defaultClientId).withConfigProvider(withKey("DEFAULT_CLIENT_ID" -> ("~" * 128)))
      yield assertTrue(lines.forall(_.contains("DEFAULT_CLIENT_ID")), dflt == "public", empty == "public", set == "~" * 128)
    },
    test("JWT_PUBLIC_KEYS_FILE is read at start; one that cannot be read is refused naming the variable") {
      val bundle = Vectors.specDir.resolve("keys/dev-public-keys.pem").toString
      for
        missing <- refusal("JWT_PUBLIC_KEYS_FILE" -> "/nonexistent/bundle.pem")
        cfg     <- Settings.load.withConfigProvider(withKey("JWT_PUBLIC_KEYS_FILE" -> bundle))
        none    <- Settings.load.withConfigProvider(withKey())
      yield assertTrue(
        missing.contains("JWT_PUBLIC_KEYS_FILE") && missing.contains("/nonexistent/bundle.pem"),
        cfg.publicKeysPem.exists(_.contains("BEGIN PUBLIC KEY")),
        cfg.keySource.publicKeysFile.contains(bundle),
        none.publicKeysPem.isEmpty
      )
    },
    test("a refused signing key is one line naming the key, through the same layer the service builds") {
      for lines <- ZIO.foreach(Vectors.invalidPrivateKeys)(f =>
                     (for
                       cfg <- Settings.load.withConfigProvider(ConfigProvider.fromMap(Map("JWT_PRIVATE_KEY_FILE" -> Vectors.specDir.resolve(f).toString)))
                       _   <- ZIO.service[TokenSigner].provideLayer(ZLayer.succeed(cfg) >>> TokenSigner.live)
                     yield "(accepted)").flip.map(_.line))
      yield assertTrue(lines.size >= 6, lines.forall(l => l.startsWith("simple-auth-zio: JWT private key ") && !l.contains("\n")))
    }
  )

  private def limits = suite("sessions and limits (§5)")(
    test("defaults: the contract's, MAX_PASSWORD_CHECKS 4 × the argon2id checks run at once") {
      for l <- Settings.load.map(_.limits).withConfigProvider(withKey())
      yield assertTrue(
        l == LimitSettings(2_592_000, 10, 300, 100, false, 4 * Argon2Memory.checksAtOnce),
        l.maxPasswordChecks >= 4
      )
    },
    test("MAX_PASSWORD_CHECKS: 4 × the argon2id checks run at once, not 4 × the cores") {
      // The project's 96 MiB heap runs one check at once whatever the cores (Argon2MemorySpec): four admitted.
      def checks(checksAtOnce: Int, vars: (String, String)*) =
        Settings.loadFor(checksAtOnce).map(_.limits.maxPasswordChecks).withConfigProvider(withKey(vars*))
      for
        one   <- checks(1)
        three <- checks(3)
        set   <- checks(1, "MAX_PASSWORD_CHECKS" -> "5")
      yield assertTrue(one == 4, three == 12, set == 5)
    },
    test("set but empty: the default (compose files pass `${X:-}`)") {
      val names = List("REFRESH_TTL_SECONDS", "LOGIN_MAX_FAILURES", "LOGIN_FAILURE_WINDOW_SECONDS", "LOGIN_IP_MAX_FAILURES",
        "TRUST_PROXY_HEADERS", "MAX_PASSWORD_CHECKS")
      for
        empty <- Settings.load.map(_.limits).withConfigProvider(withKey(names.map(_ -> "")*))
        dflt  <- Settings.load.map(_.limits).withConfigProvider(withKey())
      yield assertTrue(empty == dflt)
    },
    test("set: every one read") {
      for l <- Settings.load.map(_.limits).withConfigProvider(withKey(
                 "REFRESH_TTL_SECONDS" -> "86400", "LOGIN_MAX_FAILURES" -> "5", "LOGIN_FAILURE_WINDOW_SECONDS" -> "60",
                 "LOGIN_IP_MAX_FAILURES" -> "50", "TRUST_PROXY_HEADERS" -> "true", "MAX_PASSWORD_CHECKS" -> "3"))
      yield assertTrue(l == LimitSettings(86400, 5, 60, 50, true, 3))
    },
    test("not a positive integer, or TRUST_PROXY_HEADERS not true/false: refused in one line naming the variable") {
      val names = List("REFRESH_TTL_SECONDS", "LOGIN_MAX_FAILURES", "LOGIN_FAILURE_WINDOW_SECONDS", "LOGIN_IP_MAX_FAILURES", "MAX_PASSWORD_CHECKS")
      for
        lines <- ZIO.foreach(for n <- names; v <- List("0", "-1", "ten", "1.5", " 5", "99999999999") yield (n, v))((n, v) => refusal(n -> v).map(n -> _))
        trust <- ZIO.foreach(List("yes", "1", "on", "truee"))(v => refusal("TRUST_PROXY_HEADERS" -> v))
        caps  <- Settings.load.map(_.limits.trustProxyHeaders).withConfigProvider(withKey("TRUST_PROXY_HEADERS" -> "FALSE"))
      yield assertTrue(
        lines.forall((n, l) => l.startsWith(s"simple-auth-zio: invalid configuration: ") && l.contains(n) && !l.contains("\n")),
        trust.forall(l => l.contains("TRUST_PROXY_HEADERS") && !l.contains("\n")),
        !caps
      )
    }
  )

  private def databaseUrl = suite("DATABASE_URL")(
    test("libpq URL -> JDBC URL with user and password as properties") {
      assertTrue(
        parseDatabaseUrl("postgres://auth:auth@127.0.0.1:5432/auth") ==
          Right(JdbcSettings("jdbc:postgresql://127.0.0.1:5432/auth", Some("auth"), Some("auth"), Map("sslmode" -> "prefer")))
      )
    },
    test("fly.io form keeps query parameters; default port; percent-encoded password") {
      assertTrue(
        parseDatabaseUrl("postgres://u:p%40ss@db.internal:5433/app?sslmode=disable&connect_timeout=5") ==
          Right(JdbcSettings("jdbc:postgresql://db.internal:5433/app?connect_timeout=5", Some("u"), Some("p@ss"), Map("sslmode" -> "disable"))),
        parseDatabaseUrl("postgresql://u@host/db").map(_.url) == Right("jdbc:postgresql://host:5432/db")
      )
    },
    test("sslmode / sslrootcert become pgjdbc properties with libpq's meanings") {
      val ca = java.nio.file.Files.createTempFile("ca", ".pem")
      java.nio.file.Files.writeString(ca, TestCa.pem)
      def props(q: String) = parseDatabaseUrl(s"postgres://u:p@127.0.0.1/db$q").map(_.properties)
      assertTrue(
        props("") == Right(Map("sslmode" -> "prefer")),
        props("?sslmode=disable") == Right(Map("sslmode" -> "disable")),
        props("?sslmode=require") == Right(Map("sslmode" -> "require")),
        // libpq's rule: require with a root certificate verifies the chain
        props(s"?sslmode=require&sslrootcert=$ca") == Right(Map("sslmode" -> "verify-ca", "sslrootcert" -> ca.toString)),
        props(s"?sslmode=verify-ca&sslrootcert=$ca") == Right(Map("sslmode" -> "verify-ca", "sslrootcert" -> ca.toString)),
        props(s"?sslmode=verify-full&sslrootcert=$ca") == Right(Map("sslmode" -> "verify-full", "sslrootcert" -> ca.toString)),
        props("?sslmode=verify-full&sslrootcert=system") ==
          Right(Map("sslmode" -> "verify-full", "sslfactory" -> "org.postgresql.ssl.DefaultJavaSSLFactory")),
        props("?sslmode=require&sslrootcert=system") ==
          Right(Map("sslmode" -> "verify-ca", "sslfactory" -> "org.postgresql.ssl.DefaultJavaSSLFactory")),
        parseDatabaseUrl(s"postgres://u:p@h/db?sslmode=verify-full&sslrootcert=$ca").map(_.url) == Right("jdbc:postgresql://h:5432/db")
      )
    },
    test("TLS refusals: other sslmode values, verify-* without sslrootcert, an unreadable or empty sslrootcert") {
      val empty = java.nio.file.Files.createTempFile("empty", ".pem")
      def refused(q: String) = parseDatabaseUrl(s"postgres://u:p@127.0.0.1/db$q").left.toOption.getOrElse("")
      assertTrue(
        refused("?sslmode=bogus").contains("accepted: disable, prefer, require, verify-ca, verify-full"),
        refused("?sslmode=allow").contains("unsupported sslmode 'allow'"),
        refused("?sslmode=verify-full").contains("needs sslrootcert"),
        refused("?sslmode=verify-ca").contains("needs sslrootcert"),
        refused("?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem").contains("cannot read sslrootcert /nonexistent/ca.pem"),
        refused(s"?sslmode=require&sslrootcert=$empty").contains("holds no certificate")
      )
    },
    test("malformed URLs are refused") {
      assertTrue(
        parseDatabaseUrl("not a url").isLeft,
        parseDatabaseUrl("mysql://u:p@h/db").isLeft,
        parseDatabaseUrl("postgres://").isLeft,
        parseDatabaseUrl("postgres://u:p@h:99999/db").isLeft,
        parseDatabaseUrl("postgres://u:%zz@h/db").isLeft
      )
    }
  )
