package simpleauth

import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class SettingsSpec extends AnyWordSpec with Matchers {
  private val keyFile = Vectors.specDir.resolve("keys/dev-rsa-2048.pem").toString
  private def env(extra: (String, String)*) = Map("JWT_PRIVATE_KEY_FILE" -> keyFile) ++ extra

  "Settings" should {
    "apply the contract's defaults" in {
      val s = Settings.fromEnv(env()).fold(e => fail(e.message), identity)
      s.host shouldBe "0.0.0.0"
      s.port shouldBe 8080
      s.dbPoolSize shouldBe 10
      s.dbAcquireTimeoutMs shouldBe 1000
      s.issuer shouldBe "http://localhost:8080"
      s.audience shouldBe "channel-api"
      s.tokenTtlSeconds shouldBe 600
      s.defaultClientId shouldBe "public"
      s.keys.signing.algorithm shouldBe KeyAlgorithm.RS256
      s.keySources shouldBe KeySources(PrivateKeySource.File(keyFile), None)
      s.database shouldBe DatabaseSettings("jdbc:postgresql://127.0.0.1:5432/auth", Some("auth"), Some("auth"), Map("sslmode" -> "prefer"))
      s.limits shouldBe LimitSettings(
        refreshTtlSeconds = 2592000,
        loginMaxFailures = 10,
        loginFailureWindowSeconds = 300,
        loginIpMaxFailures = 100,
        trustedProxies = TrustedProxies.None,
        maxPasswordChecks = 4 * Argon2Memory.checksAtOnce,
        refreshMaxLifetimeSeconds = 7776000
      )
      s.metricsPort shouldBe 9091
    }

    "default MAX_PASSWORD_CHECKS to 4 × the argon2id checks run at once, not 4 × the cores" in {
      // The project's 96 MiB heap runs one check at once whatever the cores (Argon2MemorySpec): four admitted.
      def checks(checksAtOnce: Int, vars: (String, String)*) =
        Settings.fromEnv(env(vars*), checksAtOnce).map(_.limits.maxPasswordChecks)
      checks(1) shouldBe Right(4)
      checks(3) shouldBe Right(12)
      checks(1, "MAX_PASSWORD_CHECKS" -> "5") shouldBe Right(5)
      // The default is not computed (Argon2Memory not touched) when the variable is set, valid or not.
      Settings.fromEnv(env("MAX_PASSWORD_CHECKS" -> "5"), fail("the default was computed")).map(_.limits.maxPasswordChecks) shouldBe Right(5)
      Settings.fromEnv(env("MAX_PASSWORD_CHECKS" -> "0"), fail("the default was computed")).isLeft shouldBe true
    }

    "read the settings of sessions and limits" in {
      val s = Settings.fromEnv(env("REFRESH_TTL_SECONDS" -> "86400", "LOGIN_MAX_FAILURES" -> "3",
        "LOGIN_FAILURE_WINDOW_SECONDS" -> "60", "LOGIN_IP_MAX_FAILURES" -> "7",
        "TRUSTED_PROXIES" -> " 172.16.0.0/12 , fdaa::/16,10.0.0.7", "MAX_PASSWORD_CHECKS" -> "1",
        "REFRESH_MAX_LIFETIME_SECONDS" -> "86400")).fold(e => fail(e.message), identity)
      s.limits shouldBe LimitSettings(86400, 3, 60, 7, TrustedProxies.parse("172.16.0.0/12,fdaa::/16,10.0.0.7").fold(fail(_), identity),
        maxPasswordChecks = 1, refreshMaxLifetimeSeconds = 86400)
      s.limits.trustedProxies.toString shouldBe "172.16.0.0/12,fdaa:0:0:0:0:0:0:0/16,10.0.0.7/32"
      Settings.fromEnv(env("MAX_PASSWORD_CHECKS" -> "2147483647")).map(_.limits.maxPasswordChecks) shouldBe Right(Int.MaxValue)
    }

    "refuse a limit that is not a positive integer, naming it" in {
      for (name <- List("REFRESH_TTL_SECONDS", "LOGIN_MAX_FAILURES", "LOGIN_FAILURE_WINDOW_SECONDS", "LOGIN_IP_MAX_FAILURES",
             "MAX_PASSWORD_CHECKS", "REFRESH_MAX_LIFETIME_SECONDS");
           bad <- List("0", "-1", "ten", "1.5", "2147483648", "1e3"))
        withClue(s"$name=$bad")(Settings.fromEnv(env(name -> bad)).left.map(_.message).swap.getOrElse(fail()) shouldBe
          s"$name must be an integer between 1 and 2147483647, got '$bad'")
    }

    "refuse TRUST_PROXY_HEADERS set to anything, saying TRUSTED_PROXIES replaced it; empty is unset" in {
      for (old <- List("true", "false", "yes", "0"))
        withClue(old)(Settings.fromEnv(env("TRUST_PROXY_HEADERS" -> old)).left.map(_.message).swap.getOrElse(fail()) should
          (startWith("TRUST_PROXY_HEADERS was replaced by TRUSTED_PROXIES")))
      Settings.fromEnv(env("TRUST_PROXY_HEADERS" -> "")).isRight shouldBe true
    }

    "refuse a TRUSTED_PROXIES entry that is empty, not an address, out of range or with host bits set, naming it" in {
      for (bad <- List("a,,b", "10.0.0.0/8,", ",10.0.0.0/8", "10.0.0.0/8,,fdaa::/16", "example.com", "10.0.0.0/33", "::/129",
             "10.0.0.0/-1", "10.0.0.0/", "10.0.0.0/8/8", "10.0.0.0/ 8", "10.0.0.1/8", "fdaa::1/16", "[::1]", "fe80::1%eth0/128",
             "10.0.0.256", "10.0.0.0/08x"))
        withClue(bad)(Settings.fromEnv(env("TRUSTED_PROXIES" -> bad)).left.map(_.message).swap.getOrElse(fail()) should
          startWith("TRUSTED_PROXIES "))
      for (ok <- List("", "  ", "0.0.0.0/0", "::/0", "10.0.0.1", "10.0.0.1/32", "::1", "2001:db8::/32"))
        withClue(ok)(Settings.fromEnv(env("TRUSTED_PROXIES" -> ok)).isRight shouldBe true)
    }

    "read METRICS_PORT, 9091 by default, and refuse one out of range or equal to PORT, naming it" in {
      Settings.fromEnv(env("METRICS_PORT" -> "")).map(_.metricsPort) shouldBe Right(9091)
      Settings.fromEnv(env("METRICS_PORT" -> "9100")).map(_.metricsPort) shouldBe Right(9100)
      Settings.fromEnv(env("PORT" -> "0", "METRICS_PORT" -> "1")).map(_.metricsPort) shouldBe Right(1)
      for (bad <- List("0", "65536", "-1", "http", "9091.0"))
        withClue(bad)(Settings.fromEnv(env("METRICS_PORT" -> bad)).left.map(_.message) shouldBe
          Left(s"METRICS_PORT must be an integer between 1 and 65535, got '$bad'"))
      Settings.fromEnv(env("PORT" -> "9091")).left.map(_.message).swap.getOrElse(fail()) should startWith("METRICS_PORT ")
      Settings.fromEnv(env("PORT" -> "8000", "METRICS_PORT" -> "8000")).left.map(_.message).swap.getOrElse(fail()) should
        startWith("METRICS_PORT ")
    }

    "take REFRESH_MAX_LIFETIME_SECONDS not less than REFRESH_TTL_SECONDS, empty as unset" in {
      Settings.fromEnv(env("REFRESH_MAX_LIFETIME_SECONDS" -> "")).map(_.limits.refreshMaxLifetimeSeconds) shouldBe Right(7776000)
      Settings.fromEnv(env("REFRESH_TTL_SECONDS" -> "60", "REFRESH_MAX_LIFETIME_SECONDS" -> "60"))
        .map(_.limits.refreshMaxLifetimeSeconds) shouldBe Right(60)
      for ((ttl, max) <- List("61" -> "60", "2592000" -> "86400"))
        withClue(s"$ttl/$max")(Settings.fromEnv(env("REFRESH_TTL_SECONDS" -> ttl, "REFRESH_MAX_LIFETIME_SECONDS" -> max))
          .left.map(_.message).swap.getOrElse(fail()) should startWith("REFRESH_MAX_LIFETIME_SECONDS "))
      // against the default: a REFRESH_TTL_SECONDS above 90 days needs a longer session
      Settings.fromEnv(env("REFRESH_TTL_SECONDS" -> "7776001")).left.map(_.message).swap.getOrElse(fail()) should
        startWith("REFRESH_MAX_LIFETIME_SECONDS ")
    }

    "translate libpq URLs to JDBC, keeping other query parameters" in {
      Settings.parseDatabaseUrl("postgres://u:p%40ss@db.internal:6543/app?sslmode=disable&connectTimeout=3") shouldBe
        Right(DatabaseSettings("jdbc:postgresql://db.internal:6543/app?connectTimeout=3", Some("u"), Some("p@ss"), Map("sslmode" -> "disable")))
      Settings.parseDatabaseUrl("postgresql://u@localhost/app") shouldBe
        Right(DatabaseSettings("jdbc:postgresql://localhost:5432/app", Some("u"), None, Map("sslmode" -> "prefer")))
    }

    "map sslmode and sslrootcert onto pgjdbc with libpq's meanings" in {
      def tls(query: String) = Settings.parseDatabaseUrl(s"postgres://u:p@db:5432/app?$query").map(_.tls)
      val ca = java.nio.file.Files.createTempFile("simple-auth-ca", ".pem")
      java.nio.file.Files.writeString(ca, TestCa)
      try {
        tls("") shouldBe Right(Map("sslmode" -> "prefer"))
        for (mode <- List("disable", "prefer", "require")) tls(s"sslmode=$mode") shouldBe Right(Map("sslmode" -> mode))
        // libpq: require with a root certificate verifies the chain, which pgjdbc calls verify-ca.
        tls(s"sslmode=require&sslrootcert=$ca") shouldBe Right(Map("sslmode" -> "verify-ca", "sslrootcert" -> ca.toString))
        tls(s"sslmode=verify-ca&sslrootcert=$ca") shouldBe Right(Map("sslmode" -> "verify-ca", "sslrootcert" -> ca.toString))
        tls(s"sslrootcert=$ca&sslmode=verify-full") shouldBe Right(Map("sslmode" -> "verify-full", "sslrootcert" -> ca.toString))
        tls("sslmode=verify-full&sslrootcert=system") shouldBe
          Right(Map("sslmode" -> "verify-full", "sslfactory" -> "org.postgresql.ssl.DefaultJavaSSLFactory"))
        tls("sslmode=require&sslrootcert=system") shouldBe
          Right(Map("sslmode" -> "require", "sslfactory" -> "org.postgresql.ssl.DefaultJavaSSLFactory"))
      } finally java.nio.file.Files.delete(ca)
    }

    "refuse other sslmodes, verification without a root, and unreadable root certificates" in {
      def refusal(query: String) =
        Settings.parseDatabaseUrl(s"postgres://u:p@db:5432/app?$query").left.map(_.message).swap.getOrElse(fail(query))
      for (mode <- List("allow", "bogus", "REQUIRE", ""))
        refusal(s"sslmode=$mode") shouldBe
          s"DATABASE_URL: sslmode must be one of disable, prefer, require, verify-ca, verify-full; got '$mode'"
      refusal("sslmode=verify-full") should include("needs sslrootcert")
      refusal("sslmode=verify-ca") should include("needs sslrootcert")
      refusal("sslmode=require&sslmode=disable") should include("more than once")
      refusal("sslmode=verify-full&sslrootcert=/nonexistent/ca.pem") should include("is not a readable file")
      refusal(s"sslmode=verify-full&sslrootcert=${Vectors.specDir.resolve("keys")}") should include("is not a readable file")
      refusal(s"sslmode=verify-full&sslrootcert=${Vectors.specDir.resolve("keys/dev-rsa-2048.pem")}") should include("sslrootcert")
      Settings.fromEnv(env("DATABASE_URL" -> "postgres://u:p@db/app?sslmode=bogus")).left.map(_.message) shouldBe
        Left("DATABASE_URL: sslmode must be one of disable, prefer, require, verify-ca, verify-full; got 'bogus'")
    }

    "refuse malformed database URLs" in {
      for (bad <- List("not a url", "mysql://u:p@h/db", "postgres://", "postgres://u:p@:5432/db", "postgres://h:99999/db"))
        withClue(bad)(Settings.parseDatabaseUrl(bad).isLeft shouldBe true)
    }

    "take the key inline as well" in {
      val inline = Vectors.pem("keys/dev-rsa-2048.pem")
      Settings.fromEnv(Map("JWT_PRIVATE_KEY" -> inline)).isRight shouldBe true
    }

    "refuse a missing key and every invalid one, naming the variable" in {
      Settings.fromEnv(Map.empty).left.map(_.message).left.getOrElse("") should include("JWT_PRIVATE_KEY")
      Settings.fromEnv(Map("JWT_PRIVATE_KEY_FILE" -> "/nonexistent.pem")).isLeft shouldBe true
      for (f <- List("rsa-2048-pkcs1.pem", "rsa-1024-pkcs8.pem", "ec-p256-sec1.pem", "ec-p384-pkcs8.pem",
             "ec-secp256k1-pkcs8.pem", "ed448-pkcs8.pem", "public-ec-p384.pem")) {
        val path = Vectors.specDir.resolve(s"keys/invalid/$f").toString
        withClue(f)(Settings.fromEnv(Map("JWT_PRIVATE_KEY_FILE" -> path)).left.map(_.message).swap.getOrElse(fail()) should
          startWith(s"JWT_PRIVATE_KEY_FILE ($path): "))
      }
    }

    "take every dev key type, by file or inline, the algorithm following the key" in {
      for (k <- Vectors.keys) withClue(k.file) {
        val byFile = Settings.fromEnv(Map("JWT_PRIVATE_KEY_FILE" -> Vectors.specDir.resolve(k.file).toString))
        byFile.map(_.keys.signing.algorithm.name) shouldBe Right(k.alg)
        val flattened = Vectors.pem(k.file).replace("\n", "\\n") // as a secrets store writes it
        Settings.fromEnv(Map("JWT_PRIVATE_KEY" -> flattened)).map(_.keys.signing.kid) shouldBe Right(k.kid)
      }
    }

    "read JWT_PUBLIC_KEYS_FILE and refuse one that cannot be read or holds another key type" in {
      val bundle = Vectors.specDir.resolve("keys/dev-public-keys.pem").toString
      Settings.fromEnv(env("JWT_PUBLIC_KEYS_FILE" -> bundle)).map(_.keys.published.size) shouldBe Right(4)
      Settings.fromEnv(env()).map(_.keys.published) shouldBe Right(Nil)
      Settings.fromEnv(env("JWT_PUBLIC_KEYS_FILE" -> "/nonexistent.pem")).left.map(_.message).swap.getOrElse(fail()) should
        startWith("JWT_PUBLIC_KEYS_FILE cannot be read")
      val p384 = Vectors.specDir.resolve("keys/invalid/public-ec-p384.pem").toString
      Settings.fromEnv(env("JWT_PUBLIC_KEYS_FILE" -> p384)).left.map(_.message).swap.getOrElse(fail()) should
        startWith(s"JWT_PUBLIC_KEYS_FILE ($p384): ")
    }

    "take JWT_ISSUER only as an absolute http(s) URL with a host and no query or fragment" in {
      for (ok <- List("http://localhost:8080", "https://issuer.example", "https://issuer.example/", "https://a.example/tenant/x"))
        withClue(ok)(Settings.fromEnv(env("JWT_ISSUER" -> ok)).map(_.issuer) shouldBe Right(ok))
      for (bad <- List("issuer.example", "/relative", "ftp://issuer.example", "https://", "https:///path", "http://a.example/?x=1",
             "http://a.example/?", "http://a.example/#f", "https://a.example#", "not a url", "mailto:a@b.c"))
        withClue(bad)(Settings.fromEnv(env("JWT_ISSUER" -> bad)).left.map(_.message).swap.getOrElse(fail()) should
          startWith("JWT_ISSUER must be"))
    }

    "take DEFAULT_CLIENT_ID by the client_id rule, public by default (set but empty included)" in {
      Settings.fromEnv(env()).map(_.defaultClientId) shouldBe Right("public")
      Settings.fromEnv(env("DEFAULT_CLIENT_ID" -> "")).map(_.defaultClientId) shouldBe Right("public")
      for (ok <- List("a", "my client ~!", "x" * 128))
        Settings.fromEnv(env("DEFAULT_CLIENT_ID" -> ok)).map(_.defaultClientId) shouldBe Right(ok)
      for (bad <- List("x" * 129, "tab\there", "caf\u00e9", "nul\u0000"))
        withClue(bad)(Settings.fromEnv(env("DEFAULT_CLIENT_ID" -> bad)).left.map(_.message).swap.getOrElse(fail()) should
          startWith("DEFAULT_CLIENT_ID"))
    }

    "read the pool's connection lifetimes, 600 and 300 seconds by default, set but empty counting as unset" in {
      val d = Settings.fromEnv(env()).fold(e => fail(e.message), identity)
      (d.dbMaxLifetimeSeconds, d.dbIdleTimeoutSeconds) shouldBe (600L, 300L)
      val e = Settings.fromEnv(env("DB_MAX_LIFETIME_SECONDS" -> "", "DB_IDLE_TIMEOUT_SECONDS" -> " ")).fold(e => fail(e.message), identity)
      (e.dbMaxLifetimeSeconds, e.dbIdleTimeoutSeconds) shouldBe (600L, 300L)
      val s = Settings.fromEnv(env("DB_MAX_LIFETIME_SECONDS" -> "30", "DB_IDLE_TIMEOUT_SECONDS" -> "10")).fold(e => fail(e.message), identity)
      (s.dbMaxLifetimeSeconds, s.dbIdleTimeoutSeconds) shouldBe (30L, 10L)
      val l = Settings.fromEnv(env("DB_MAX_LIFETIME_SECONDS" -> "86400", "DB_IDLE_TIMEOUT_SECONDS" -> "3600")).fold(e => fail(e.message), identity)
      (l.dbMaxLifetimeSeconds, l.dbIdleTimeoutSeconds) shouldBe (86400L, 3600L)
    }

    "refuse pool lifetimes below HikariCP's minimums, not integers, or an idle timeout not below the lifetime, naming them" in {
      def refusal(vars: (String, String)*) = Settings.fromEnv(env(vars*)).left.map(_.message).swap.getOrElse(fail(s"accepted: $vars"))
      for (bad <- List("29", "0", "-600", "ten", "600s", "1.5", "99999999999"))
        withClue(bad)(refusal("DB_MAX_LIFETIME_SECONDS" -> bad) should startWith("DB_MAX_LIFETIME_SECONDS "))
      for (bad <- List("9", "0", "-1", "five", "300 s"))
        withClue(bad)(refusal("DB_IDLE_TIMEOUT_SECONDS" -> bad) should startWith("DB_IDLE_TIMEOUT_SECONDS "))
      for ((life, idle) <- List("600" -> "600", "60" -> "300", "30" -> "30"))
        withClue(s"$life/$idle") {
          val message = refusal("DB_MAX_LIFETIME_SECONDS" -> life, "DB_IDLE_TIMEOUT_SECONDS" -> idle)
          message should include("DB_IDLE_TIMEOUT_SECONDS")
          message should include("DB_MAX_LIFETIME_SECONDS")
        }
      refusal("DB_IDLE_TIMEOUT_SECONDS" -> "600") should include("DB_IDLE_TIMEOUT_SECONDS") // against the default lifetime
      refusal("DB_MAX_LIFETIME_SECONDS" -> "300") should include("DB_MAX_LIFETIME_SECONDS") // against the default idle time
    }

    "refuse non-numeric sizes and raise tiny acquire timeouts to HikariCP's floor" in {
      Settings.fromEnv(env("DB_POOL_SIZE" -> "ten")).isLeft shouldBe true
      Settings.fromEnv(env("DB_ACQUIRE_TIMEOUT_MS" -> "50")).map(_.dbAcquireTimeoutMs) shouldBe Right(250)
    }
  }

  /** A self-signed CA certificate (its key is not kept): enough for the parser, which only reads certificates. */
  private val TestCa: String = """-----BEGIN CERTIFICATE-----
MIIDHTCCAgWgAwIBAgIUXE5Lu1WQFlWuzFFnsnU/XdhV7BwwDQYJKoZIhvcNAQEL
BQAwHjEcMBoGA1UEAwwTc2ltcGxlLWF1dGggdGVzdCBDQTAeFw0yNjExMjMxNjA3
MThaFw0zNjExMjAxNjA3MThaMB4xHDAaBgNVBAMME3NpbXBsZS1hdXRoIHRlc3Qg
Q0EwggEiMA0GCSqGSIb3DQEBAQUAA4IBDwAwggEKAoIBAQDdJhKhhhOGECFTzzXS
66z8gpYUn23J4bDA8pdzYgIabXuJpWz1a9WpSspbOMndEmyqBd9FotPyeSSkUTgj
R/FDVIW2u8vk1bcokpNuWcsmXWYCnyxB8Vf127QF7YxAdvzUDq/SUeoZG16KquF2
mHE/TcBpDNooojPlzConePnaLCNXKA3oNNpDb0gaSev13msJ1WHCqtC8ewvCWT/A
AuVasulv1l4sPzhfmMFRc+dtEgNvkPq4HxZzn+tl/Ciwz7fjmzHM5MtqnK/mc7sc
SWKyvbkmuFkT6DobCpnoQPWqAhMX3Y5Ik3jgEpHkhAsClSVezMnPRD6Sqm5PcObv
4nR1AgMBAAGjUzBRMB0GA1UdDgQWBBRh+4LPAQG4mHpSE1Ty7EtZHsGUdjAfBgNV
HSMEGDAWgBRh+4LPAQG4mHpSE1Ty7EtZHsGUdjAPBgNVHRMBAf8EBTADAQH/MA0G
CSqGSIb3DQEBCwUAA4IBAQA09p0Zdrs0+SdITyrUI0bY4ufhD259imBgibXUfRDY
+PELu+Yqe/taAnL/4FdVLqW15NtMxqxxYkDPa6jfPgLu+umcRq3lMWTNjNHDf1yM
LJvET1W6GBdJ7CunUUu0JzGF39CtFMTGNUSlK+isFO76nv1+jqVxQlM1iVu8ZSdY
1SiCz3TESv7RdPVWHuamX8fSXvZ89+P6aktDKTDcqNd8p6MOG+0BzwWgEB1JHPxr
pH5rR9GQyTTujiuJkgIoo6+G1yj2doZnDHyiGxbNNVUDYY2j2RLnaiuA1fGZZd5V
U36ZzxZ5ldgVu4WO6tGZ1sUzindVYhQi6e9LskaSk/BC
-----END CERTIFICATE-----
"""
}
