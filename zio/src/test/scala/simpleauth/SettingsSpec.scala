package simpleauth

import zio.*
import zio.test.*

/**
 * How this stack reads its settings: the environment through ZIO's `System`, the core's rules (scala-core's
 * SettingsSpec has them one by one), a refusal as the start's one line on stderr.
 */
object SettingsSpec extends ZIOSpecDefault:
  private val keyFile = Vectors.specDir.resolve("keys/dev-rsa-2048.pem").toAbsolutePath.toString

  private def env(vars: (String, String)*): Map[String, String] = Map("JWT_PRIVATE_KEY_FILE" -> keyFile) ++ vars

  def spec = suite("Settings (zio)")(
    test("the environment is read through ZIO's System, with the contract's defaults") {
      for
        _   <- ZIO.foreachDiscard(env("DB_POOL_SIZE" -> "3", "DB_MAX_LIFETIME_SECONDS" -> "900"))((k, v) => TestSystem.putEnv(k, v))
        cfg <- Main.loadSettings
      yield assertTrue(
        cfg.port == 8080,
        cfg.dbPoolSize == 3,
        cfg.dbMaxLifetimeSeconds == 900L,
        cfg.dbIdleTimeoutSeconds == 300L,
        cfg.limits.maxPasswordChecks == 4 * Argon2Memory.checksAtOnce,
        cfg.keys.signing.kid == Vectors.key("rsa-2048").kid
      )
    },
    test("a refused setting is one line on stderr naming the variable") {
      for
        refused <- Main.settingsFrom(env("PORT" -> "99999")).flip
        line     = Main.refusal(refused)
      yield assertTrue(line.startsWith("simple-auth-zio: PORT "), !line.contains("\n"))
    },
    test("pool lifetimes out of order are refused naming both variables") {
      for
        refused <- Main.settingsFrom(env("DB_MAX_LIFETIME_SECONDS" -> "60", "DB_IDLE_TIMEOUT_SECONDS" -> "60")).flip
      yield assertTrue(refused.message.contains("DB_IDLE_TIMEOUT_SECONDS"), refused.message.contains("DB_MAX_LIFETIME_SECONDS"))
    },
    test("a key the core refuses stops the start through the same settings the service loads") {
      for
        refused <- Main.settingsFrom(env("JWT_PRIVATE_KEY_FILE" -> Vectors.specDir.resolve("keys/invalid/ec-p384-pkcs8.pem").toAbsolutePath.toString)).flip
      yield assertTrue(refused.message.contains("JWT_PRIVATE_KEY_FILE"), refused.message.contains("P-256"))
    },
    test("LOG_LEVEL, read before the settings for the logger: case and blanks aside, unknown values the default") {
      assertTrue(
        Logging.level(Some(" DEBUG ")) == LogLevel.Debug,
        Logging.level(Some("warn")) == LogLevel.Warning,
        Logging.level(Some("error")) == LogLevel.Error,
        Logging.level(Some("loud")) == LogLevel.Info,
        Logging.level(None) == LogLevel.Info
      )
    }
  ) @@ TestAspect.sequential
