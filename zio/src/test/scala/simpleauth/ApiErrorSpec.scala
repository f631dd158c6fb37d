package simpleauth

import zio.*
import zio.http.*
import zio.test.*

/** Error mapping: each case to its status, headers and bytes (contract §1, §7, §8). */
object ApiErrorSpec extends ZIOSpecDefault:
  private def render(e: ApiError): UIO[(Int, Option[String], Option[String], Option[String], String)] =
    val r = e.toResponse
    r.body.asString.orDie.map(b => (r.status.code, r.rawHeader("retry-after"), r.rawHeader("cache-control"), r.rawHeader("content-type"), b))

  private val tooMany = """{"error":"temporarily_unavailable","error_description":"too many failed logins; try again later"}"""

  def spec = suite("ApiError")(
    test("both locks: 429, Retry-After the seconds left (at least 1), no-store, the fixed body") {
      for
        a <- render(ApiError.TooManyFailedLogins(280))
        b <- render(ApiError.TooManyFailedLogins(0))
      yield assertTrue(
        a == (429, Some("280"), Some("no-store"), Some("application/json"), tooMany),
        b._2.contains("1")
      )
    },
    test("database down and a shed check: 503 temporarily_unavailable with Retry-After: 1") {
      for r <- render(ApiError.TemporarilyUnavailable)
      yield assertTrue(
        r._1 == 503, r._2.contains("1"), r._3.contains("no-store"),
        r._5.startsWith("""{"error":"temporarily_unavailable","error_description":""")
      )
    },
    test("a refused refresh: exactly the refresh invalid_grant bytes; a refused login: the login's") {
      for
        refresh <- render(ApiError.InvalidRefreshToken)
        login   <- render(ApiError.InvalidGrant)
      yield assertTrue(
        refresh == (400, None, Some("no-store"), Some("application/json"), """{"error":"invalid_grant","error_description":"invalid refresh token"}"""),
        login == (400, None, Some("no-store"), Some("application/json"), """{"error":"invalid_grant","error_description":"invalid username or password"}""")
      )
    },
    test("unsupported_grant_type names both grants") {
      render(ApiError.UnsupportedGrantType).map(r => assertTrue(r._1 == 400, r._5.contains("unsupported_grant_type"), r._5.contains("refresh_token")))
    }
  )
