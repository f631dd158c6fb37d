package simpleauth

import zio.test.*

object AppConfigSpec extends ZIOSpecDefault:
  import AppConfig.parseDatabaseUrl

  def spec = suite("DATABASE_URL")(
    test("libpq URL -> JDBC URL with user and password as properties") {
      assertTrue(
        parseDatabaseUrl("postgres://auth:auth@127.0.0.1:5432/auth") ==
          Right(JdbcSettings("jdbc:postgresql://127.0.0.1:5432/auth", Some("auth"), Some("auth")))
      )
    },
    test("fly.io form keeps query parameters; default port; percent-encoded password") {
      assertTrue(
        parseDatabaseUrl("postgres://u:p%40ss@db.internal:5433/app?sslmode=disable") ==
          Right(JdbcSettings("jdbc:postgresql://db.internal:5433/app?sslmode=disable", Some("u"), Some("p@ss"))),
        parseDatabaseUrl("postgresql://u@host/db").map(_.url) == Right("jdbc:postgresql://host:5432/db")
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
