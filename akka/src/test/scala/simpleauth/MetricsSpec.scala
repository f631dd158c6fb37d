package simpleauth

import akka.http.scaladsl.model.*
import akka.http.scaladsl.model.headers.Allow
import akka.http.scaladsl.testkit.{RouteTestTimeout, ScalatestRouteTest}
import java.util.UUID
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import scala.concurrent.Future
import scala.concurrent.duration.*

class MetricsSpec extends AnyWordSpec with Matchers with ScalatestRouteTest {
  given RouteTestTimeout = RouteTestTimeout(10.seconds)

  private val john = User(UUID.randomUUID(), "johndoe", "John Doe", "john@example.com",
    "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=")
  private val broken = User(UUID.randomUUID(), "broken", "Broken", "broken@example.com", "$argon2id$v=19$nonsense")

  private val Users = new InMemoryStore(List(john, broken))

  private object Pool extends PoolStatistics {
    def active = 1; def idle = 9; def pending = 0; def max = 10
  }

  private val metrics = TestKeys.metrics()
  metrics.bindPool(Pool)
  private val both = TestRoutes.of(Users, metrics)
  private val routes = both.routes
  private val scrapeRoutes = both.metricsRoutes // the METRICS_PORT listener's

  /** Sample name with labels (as written) -> value, from the text format. */
  private def samples(): Map[String, Double] = {
    var text = ""
    Get("/metrics") ~> scrapeRoutes ~> check {
      status shouldBe StatusCodes.OK
      contentType.value.toLowerCase shouldBe "text/plain; version=0.0.4; charset=utf-8"
      text = responseAs[String]
    }
    text.linesIterator.filterNot(l => l.startsWith("#") || l.isBlank).map { line =>
      val at = line.lastIndexOf(' ')
      line.substring(0, at) -> line.substring(at + 1).toDouble
    }.toMap
  }

  private def post(body: String, contentType: ContentType = ContentTypes.`application/json`): StatusCode = {
    var result: StatusCode = StatusCodes.InternalServerError
    Post("/token", HttpEntity(contentType, akka.util.ByteString(body))) ~> routes ~> check { result = status }
    result
  }

  /** What moved between two scrapes, for the families that count token requests and password checks. */
  private def moved(before: Map[String, Double], after: Map[String, Double]): Map[String, Double] =
    after.collect {
      case (name, v) if (name.startsWith("simpleauth_token_requests_total") || name.startsWith("simpleauth_password_checks_total") ||
          name.startsWith("simpleauth_token_request_duration_seconds_count") ||
          name.startsWith("simpleauth_token_signing_duration_seconds_count")) && v != before.getOrElse(name, 0.0) =>
        name -> (v - before.getOrElse(name, 0.0))
    }

  "GET /metrics" should {
    "serve the required families with their exact names, labels and buckets" in {
      post("""{"username":"john@example.com","password":"TopSecret0!"}""") shouldBe StatusCodes.OK
      val s = samples()
      s.keySet should contain allOf (
        """simpleauth_token_requests_total{error="none",status="200"}""",
        """simpleauth_password_checks_total{result="match",scheme="hmac-sha256"}""",
        """simpleauth_password_checks_total{result="mismatch",scheme="dummy"}""",
        "simpleauth_token_request_duration_seconds_count",
        "simpleauth_token_request_duration_seconds_sum",
        "simpleauth_token_signing_duration_seconds_count",
        """simpleauth_db_pool_connections{state="active"}""",
        """simpleauth_db_pool_connections{state="idle"}""",
        "simpleauth_db_pool_pending",
        "simpleauth_db_pool_max",
        """simpleauth_key_reloads_total{result="success"}""",
        """simpleauth_key_reloads_total{result="failure"}"""
      )
      s("""simpleauth_key_reloads_total{result="success"}""") shouldBe 0
      for (reason <- List("username_locked", "address_locked", "overload", "refresh_reuse"))
        s(s"""simpleauth_rejections_total{reason="$reason"}""") shouldBe 0 // all four series from the start
      s("""simpleauth_token_requests_total{error="temporarily_unavailable",status="429"}""") shouldBe 0
      s("""simpleauth_key_reloads_total{result="failure"}""") shouldBe 0
      def bounds(family: String) = s.keySet.toList.collect {
        case k if k.startsWith(family + "_bucket{le=\"") => k.stripPrefix(family + "_bucket{le=\"").stripSuffix("\"}")
      }.map(b => if (b == "+Inf") Double.PositiveInfinity else b.toDouble).sorted
      bounds("simpleauth_token_request_duration_seconds") shouldBe
        List(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, Double.PositiveInfinity)
      bounds("simpleauth_token_signing_duration_seconds") shouldBe
        List(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, Double.PositiveInfinity)
      s("""simpleauth_db_pool_connections{state="idle"}""") shouldBe 9
      s("simpleauth_db_pool_max") shouldBe 10
    }

    "count a login under 200/none and its password check, and time one request and one signing" in {
      val before = samples()
      post("""{"username":"john@example.com","password":"TopSecret0!"}""") shouldBe StatusCodes.OK
      moved(before, samples()) shouldBe Map(
        """simpleauth_token_requests_total{error="none",status="200"}""" -> 1.0,
        """simpleauth_password_checks_total{result="match",scheme="hmac-sha256"}""" -> 1.0,
        "simpleauth_token_request_duration_seconds_count" -> 1.0,
        "simpleauth_token_signing_duration_seconds_count" -> 1.0
      )
    }

    "count each error answer under its status and code, and every password check" in {
      val cases: List[(() => StatusCode, Map[String, Double])] = List(
        (() => post("""{"username":"john@example.com","password":"nope"}"""), Map(
          """simpleauth_token_requests_total{error="invalid_grant",status="400"}""" -> 1.0,
          """simpleauth_password_checks_total{result="mismatch",scheme="hmac-sha256"}""" -> 1.0)),
        (() => post("""{"username":"ghost@example.com","password":"x"}"""), Map(
          """simpleauth_token_requests_total{error="invalid_grant",status="400"}""" -> 1.0,
          """simpleauth_password_checks_total{result="mismatch",scheme="dummy"}""" -> 1.0)),
        (() => post("""{"username":"broken@example.com","password":"x"}"""), Map(
          """simpleauth_token_requests_total{error="invalid_grant",status="400"}""" -> 1.0,
          """simpleauth_password_checks_total{result="unusable",scheme="argon2id"}""" -> 1.0)),
        (() => post("{"), Map("""simpleauth_token_requests_total{error="invalid_request",status="400"}""" -> 1.0)),
        (() => post("""{"grant_type":"x","username":"a","password":"b"}"""), Map(
          """simpleauth_token_requests_total{error="unsupported_grant_type",status="400"}""" -> 1.0)),
        (() => post("x", ContentTypes.`text/plain(UTF-8)`), Map(
          """simpleauth_token_requests_total{error="invalid_request",status="415"}""" -> 1.0)),
        (() => post("{\"p\":\"" + "x" * 9000 + "\"}"), Map(
          """simpleauth_token_requests_total{error="invalid_request",status="413"}""" -> 1.0))
      )
      for ((send, expected) <- cases) {
        val before = samples()
        send()
        withClue(expected.keys.head) {
          moved(before, samples()) shouldBe expected ++ Map("simpleauth_token_request_duration_seconds_count" -> 1.0)
        }
      }
    }

    "answer HEAD on the metrics port, and 404 to everything else there; nothing counted as a token request" in {
      val before = samples()
      Head("/metrics") ~> scrapeRoutes ~> check { status shouldBe StatusCodes.OK }
      val login = HttpEntity(ContentTypes.`application/json`, """{"username":"john@example.com","password":"TopSecret0!"}""")
      for (request <- List(Post("/metrics"), Options("/metrics"), Get("/token"), Post("/token", login), Get("/health"),
             Get("/metrics/"), Get("/")))
        request ~> scrapeRoutes ~> check {
          withClue(request)(status shouldBe StatusCodes.NotFound)
          responseAs[String] shouldBe """{"error":"not_found"}"""
        }
      moved(before, samples()) shouldBe empty
    }

    "not be served on the public port: 404 for every method, as an unknown path" in {
      for (request <- List(Get("/metrics"), Head("/metrics"), Post("/metrics"), Options("/metrics")))
        request ~> routes ~> check {
          withClue(request)(status shouldBe StatusCodes.NotFound)
          header[Allow] shouldBe None
          if (request.method != HttpMethods.HEAD) responseAs[String] shouldBe """{"error":"not_found"}"""
        }
    }
  }
}
