package simpleauth

import akka.http.scaladsl.model.*
import akka.http.scaladsl.model.headers.*
import akka.http.scaladsl.testkit.{RouteTestTimeout, ScalatestRouteTest}
import akka.stream.scaladsl.Source
import akka.util.ByteString
import java.sql.SQLTransientConnectionException
import java.util.UUID
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import scala.concurrent.Future
import scala.concurrent.duration.*
import spray.json.*

class TokenRoutesSpec extends AnyWordSpec with Matchers with ScalatestRouteTest {
  given RouteTestTimeout = RouteTestTimeout(10.seconds)

  private val john = User(UUID.randomUUID(), "johndoe", "John Doe", "john@example.com",
    "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=")
  private val jane = User(UUID.randomUUID(), "janeroe", "Jane Roe", "jane@example.com",
    "$argon2id$v=19$m=19456,t=2,p=1$/aNuSw+NVpEX1i/cSRL/0Q$7ANI+9Bn7BQexYE+jCxcw3Ys0DheKsm8wAf+7WstZAs")
  private val broken = User(UUID.randomUUID(), "broken", "Broken Hash", "broken@example.com", "$bcrypt$2b$10$xyz")

  /** In-memory users; `down` makes every call fail the way an unreachable database does. */
  final class FakeUserRepository extends UserRepository {
    @volatile var down = false
    @volatile var lookups = List.empty[String]
    private val byEmail = List(john, jane, broken).map(u => u.email -> u).toMap
    private def unavailable = Future.failed(new DatabaseUnavailable(new SQLTransientConnectionException("pool timeout")))
    override def findByEmail(email: String): Future[Option[User]] =
      if (down) unavailable else { lookups = email :: lookups; Future.successful(byEmail.get(email.toLowerCase)) }
    override def ping(): Future[Unit] = if (down) unavailable else Future.unit
  }

  private val repo = new FakeUserRepository
  private val routes = TestRoutes(repo, Vectors.metrics())

  private val InvalidGrant = """{"error":"invalid_grant","error_description":"invalid username or password"}"""

  private def json(body: String) = HttpEntity(ContentTypes.`application/json`, body)
  private def form(body: String) = HttpEntity(ContentType(MediaTypes.`application/x-www-form-urlencoded`), ByteString(body))
  private def bodyJson = JsonParser(responseAs[String]).asJsObject.fields
  private def errorCode = bodyJson("error").asInstanceOf[JsString].value

  private def checkErrorShape(): Unit = {
    contentType shouldBe ContentTypes.`application/json`
    header[`Cache-Control`].map(_.value) shouldBe Some("no-store")
  }

  "POST /token" should {
    "issue a token pair for a JSON body" in {
      Post("/token", json("""{"username":"john@example.com","password":"TopSecret0!"}""")) ~> routes ~> check {
        status shouldBe StatusCodes.OK
        contentType shouldBe ContentTypes.`application/json`
        header[`Cache-Control`].map(_.value) shouldBe Some("no-store")
        header("Pragma").map(_.value) shouldBe Some("no-cache")
        bodyJson.keySet shouldBe Set("access_token", "id_token", "token_type", "expires_in")
        bodyJson("token_type") shouldBe JsString("Bearer")
        bodyJson("expires_in") shouldBe JsNumber(600)
        // The contract's bytes: its member order, compact.
        val jwt = "[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+"
        responseAs[String] should fullyMatch regex
          s"""\\{"access_token":"$jwt","id_token":"$jwt","token_type":"Bearer","expires_in":600\\}"""
      }
    }

    "answer in JSON whatever the client accepts" in {
      val login = json("""{"username":"john@example.com","password":"TopSecret0!"}""")
      Post("/token", login) ~> addHeader(Accept(MediaRange(MediaTypes.`text/html`))) ~> routes ~> check {
        status shouldBe StatusCodes.OK
        contentType shouldBe ContentTypes.`application/json`
        bodyJson.keySet should contain("access_token")
      }
      Post("/token", json("""{"username":"john@example.com","password":"wrong"}""")) ~>
        addHeader(Accept(MediaRange(MediaTypes.`text/plain`))) ~> routes ~> check {
          status shouldBe StatusCodes.BadRequest
          responseAs[String] shouldBe InvalidGrant
        }
      for (path <- List("/health", "/health/live", "/.well-known/jwks.json"))
        Get(path) ~> addHeader(Accept(MediaRange(MediaTypes.`text/html`))) ~> routes ~> check {
          withClue(path) {
            status shouldBe StatusCodes.OK
            contentType shouldBe ContentTypes.`application/json`
          }
        }
    }

    "issue a token pair for a form body (argon2id user, mixed-case username)" in {
      Post("/token", form("grant_type=password&username=Jane%40Example.com&password=CorrectHorse9%21&scope=x")) ~> routes ~> check {
        status shouldBe StatusCodes.OK
        bodyJson.keySet should contain("id_token")
      }
    }

    "accept a charset parameter and an optional grant_type in JSON" in {
      val ct = ContentType.parse("application/json; charset=utf-8").toOption.get
      Post("/token", HttpEntity(ct, ByteString("""{"grant_type":"password","username":"john@example.com","password":"TopSecret0!","x":1}"""))) ~>
        routes ~> check { status shouldBe StatusCodes.OK }
    }

    "answer the same bytes for a wrong password, an unknown user and an unusable hash" in {
      for (body <- List(
             """{"username":"john@example.com","password":"wrong"}""",
             """{"username":"nobody@example.com","password":"TopSecret0!"}""",
             """{"username":"broken@example.com","password":"TopSecret0!"}""",
             """{"username":"jane@example.com","password":"CorrectHorse9?"}"""))
        Post("/token", json(body)) ~> routes ~> check {
          status shouldBe StatusCodes.BadRequest
          checkErrorShape()
          responseAs[String] shouldBe InvalidGrant
        }
    }

    "reject bodies that are not a JSON object or have badly typed fields" in {
      for (body <- List("not json", "[]", "\"s\"", "null", "{}",
             """{"username":"john@example.com"}""",
             """{"username":null,"password":"x"}""",
             """{"username":1,"password":"x"}""",
             """{"username":"john@example.com","password":{}}""",
             """{"username":"","password":"x"}""",
             """{"username":"john@example.com","password":""}""",
             """{"grant_type":1,"username":"john@example.com","password":"x"}"""))
        Post("/token", json(body)) ~> routes ~> check {
          withClue(body) {
            status shouldBe StatusCodes.BadRequest
            checkErrorShape()
            errorCode shouldBe "invalid_request"
          }
        }
    }

    "reject a grant_type other than password" in {
      Post("/token", json("""{"grant_type":"client_credentials","username":"a@b.c","password":"x"}""")) ~> routes ~> check {
        status shouldBe StatusCodes.BadRequest
        errorCode shouldBe "unsupported_grant_type"
      }
      Post("/token", json("""{"grant_type":"","username":"a@b.c","password":"x"}""")) ~> routes ~> check {
        errorCode shouldBe "unsupported_grant_type"
      }
      Post("/token", form("grant_type=implicit&username=a%40b.c&password=x")) ~> routes ~> check {
        status shouldBe StatusCodes.BadRequest
        errorCode shouldBe "unsupported_grant_type"
      }
    }

    "reject form bodies with missing, empty or repeated parameters" in {
      for (body <- List(
             "username=john%40example.com&password=TopSecret0!",
             "grant_type=&username=john%40example.com&password=TopSecret0!",
             "grant_type=password&username=&password=TopSecret0!",
             "grant_type=password&username=john%40example.com",
             "grant_type=password&grant_type=password&username=john%40example.com&password=TopSecret0!",
             "grant_type=password&username=john%40example.com&username=john%40example.com&password=TopSecret0!",
             "grant_type=password&username=john%40example.com&password=a&password=b",
             "grant_type=password&username=john%40example.com&password=%ZZ"))
        Post("/token", form(body)) ~> routes ~> check {
          withClue(body) {
            status shouldBe StatusCodes.BadRequest
            errorCode shouldBe "invalid_request"
          }
        }
    }

    "decode + as a space in form values" in {
      repo.lookups = Nil
      Post("/token", form("grant_type=password&username=a+b%40example.com&password=x")) ~> routes ~> check {
        errorCode shouldBe "invalid_grant"
      }
      repo.lookups.head shouldBe "a b@example.com"
    }

    "reject invalid UTF-8" in {
      val bytes = ByteString("""{"username":"john@example.com","password":"""") ++ ByteString(0xff.toByte, 0xfe.toByte) ++ ByteString("\"}")
      Post("/token", HttpEntity(ContentTypes.`application/json`, bytes)) ~> routes ~> check {
        status shouldBe StatusCodes.BadRequest
        errorCode shouldBe "invalid_request"
      }
    }

    "enforce the username and password limits" in {
      val longUser = "u" * 255
      Post("/token", json(s"""{"username":"$longUser","password":"x"}""")) ~> routes ~> check {
        status shouldBe StatusCodes.BadRequest
        errorCode shouldBe "invalid_request"
      }
      // 254 code points, each two UTF-16 units: still within the limit.
      val astral = "\uD83D\uDE00" * 254
      Post("/token", json(s"""{"username":"$astral","password":"x"}""")) ~> routes ~> check {
        errorCode shouldBe "invalid_grant"
      }
      Post("/token", json(s"""{"username":"a@b.c","password":"${"é" * 513}"}""")) ~> routes ~> check {
        errorCode shouldBe "invalid_request"
      }
      Post("/token", json(s"""{"username":"a@b.c","password":"${"é" * 512}"}""")) ~> routes ~> check {
        errorCode shouldBe "invalid_grant"
      }
    }

    "refuse a NUL in the username before it reaches the database" in {
      Post("/token", json("{\"username\":\"john\\u0000@example.com\",\"password\":\"TopSecret0!\"}")) ~> routes ~> check {
        status shouldBe StatusCodes.BadRequest
        errorCode shouldBe "invalid_request"
      }
      Post("/token", form("grant_type=password&username=john%00%40example.com&password=x")) ~> routes ~> check {
        errorCode shouldBe "invalid_request"
      }
    }

    "answer 415 for a missing or other Content-Type" in {
      for (entity <- List(
             HttpEntity(ContentTypes.`text/plain(UTF-8)`, "{}"),
             HttpEntity(ContentTypes.NoContentType, ByteString("{}")),
             HttpEntity(ContentTypes.`application/octet-stream`, ByteString("{}"))))
        Post("/token", entity) ~> routes ~> check {
          status shouldBe StatusCodes.UnsupportedMediaType
          checkErrorShape()
          errorCode shouldBe "invalid_request"
        }
    }

    "accept exactly 8192 bytes and answer 413 above, with Content-Length or chunked" in {
      def padded(size: Int): String = {
        val head = """{"username":"nobody@example.com","password":"x","pad":""""
        head + ("a" * (size - head.length - 2)) + "\"}"
      }
      padded(8192).length shouldBe 8192
      Post("/token", json(padded(8192))) ~> routes ~> check { errorCode shouldBe "invalid_grant" }
      Post("/token", json(padded(8193))) ~> routes ~> check {
        status shouldBe StatusCodes.ContentTooLarge
        checkErrorShape()
        errorCode shouldBe "invalid_request"
      }
      val chunks = Source(padded(9000).grouped(1000).map(s => HttpEntity.ChunkStreamPart(s)).toList)
      Post("/token", HttpEntity.Chunked(ContentTypes.`application/json`, chunks)) ~> routes ~> check {
        status shouldBe StatusCodes.ContentTooLarge
        errorCode shouldBe "invalid_request"
      }
    }

    "answer 503 with Retry-After when the database is unavailable" in {
      repo.down = true
      try
        Post("/token", json("""{"username":"john@example.com","password":"TopSecret0!"}""")) ~> routes ~> check {
          status shouldBe StatusCodes.ServiceUnavailable
          checkErrorShape()
          header("Retry-After").map(_.value) shouldBe Some("1")
          errorCode shouldBe "temporarily_unavailable"
        }
      finally repo.down = false
    }
  }

  "methods and paths" should {
    val Foo = HttpMethod.custom("FOO")
    val Query = HttpMethod.custom("QUERY")
    val body = json("""{"username":"john@example.com","password":"TopSecret0!"}""")
    // akka-http's model cannot hold a TRACE with content (its parser refuses one before routing).
    def entities(method: HttpMethod) = if (method.isEntityAccepted) List(HttpEntity.Empty, body) else List(HttpEntity.Empty)

    "answer 405 with Allow: POST on /token to every other method, with or without a body" in {
      for (method <- List(HttpMethods.GET, HttpMethods.PUT, HttpMethods.DELETE, HttpMethods.PATCH,
             HttpMethods.OPTIONS, HttpMethods.TRACE, Foo, Query);
           entity <- entities(method))
        HttpRequest(method, "/token", entity = entity) ~> routes ~> check {
          withClue(s"$method ${entity.contentLengthOption}") {
            status shouldBe StatusCodes.MethodNotAllowed
            header[Allow].map(_.value) shouldBe Some("POST")
            checkErrorShape()
            errorCode shouldBe "invalid_request"
          }
        }
      // HEAD: the same status and headers (the server drops the body of a HEAD answer).
      Head("/token") ~> routes ~> check {
        status shouldBe StatusCodes.MethodNotAllowed
        header[Allow].map(_.value) shouldBe Some("POST")
      }
    }

    "answer GET and HEAD on the read-only endpoints, 405 with Allow: GET, HEAD to anything else" in {
      for (path <- List("/health", "/health/live", "/.well-known/jwks.json")) {
        Head(path) ~> routes ~> check {
          withClue(s"HEAD $path") {
            status shouldBe StatusCodes.OK
            contentType shouldBe ContentTypes.`application/json`
          }
        }
        for (method <- List(HttpMethods.POST, HttpMethods.PUT, HttpMethods.DELETE, HttpMethods.PATCH,
               HttpMethods.OPTIONS, HttpMethods.TRACE, Foo, Query);
             entity <- entities(method))
          HttpRequest(method, path, entity = entity) ~> routes ~> check {
            withClue(s"$method $path ${entity.contentLengthOption}") {
              status shouldBe StatusCodes.MethodNotAllowed
              header[Allow].map(_.value) shouldBe Some("GET, HEAD")
              checkErrorShape()
              errorCode shouldBe "invalid_request"
            }
          }
      }
    }

    "answer 404 {\"error\":\"not_found\"} for unknown paths, whatever the method" in {
      for (path <- List("/", "/nope", "/token/", "/health/", "/health/live/x", "/TOKEN");
           method <- List(HttpMethods.GET, HttpMethods.POST, HttpMethods.DELETE, HttpMethods.OPTIONS, Foo, Query))
        HttpRequest(method, path, entity = body) ~> routes ~> check {
          withClue(s"$method $path") {
            status shouldBe StatusCodes.NotFound
            checkErrorShape()
            responseAs[String] shouldBe """{"error":"not_found"}"""
          }
        }
      Head("/nope") ~> routes ~> check { status shouldBe StatusCodes.NotFound }
    }
  }

  "GET /.well-known/jwks.json" should {
    "publish the signing key" in {
      Get("/.well-known/jwks.json") ~> routes ~> check {
        status shouldBe StatusCodes.OK
        contentType shouldBe ContentTypes.`application/json`
        header[`Cache-Control`].map(_.value) shouldBe Some("public, max-age=300")
        val key = Vectors.keys.find(_.file.endsWith("dev-rsa-2048.pem")).get
        JsonParser(responseAs[String]) shouldBe JsObject("keys" -> JsArray(JsObject(
          "kty" -> JsString("RSA"), "use" -> JsString("sig"), "alg" -> JsString("RS256"),
          "kid" -> JsString(key.kid), "n" -> JsString(key.n), "e" -> JsString("AQAB"))))
        // The contract's bytes, member order included.
        responseAs[String] shouldBe
          s"""{"keys":[{"kty":"RSA","use":"sig","alg":"RS256","kid":"${key.kid}","n":"${key.n}","e":"AQAB"}]}"""
      }
    }
  }

  "GET /health" should {
    "say up when the database answers and down when it does not" in {
      Get("/health") ~> routes ~> check {
        status shouldBe StatusCodes.OK
        responseAs[String] shouldBe """{"status":"up"}"""
      }
      repo.down = true
      try
        Get("/health") ~> routes ~> check {
          status shouldBe StatusCodes.ServiceUnavailable
          responseAs[String] shouldBe """{"status":"down"}"""
        }
      finally repo.down = false
    }
  }

  "GET /health/live" should {
    "say up without asking the database, also while it is down" in {
      repo.down = true
      try
        Get("/health/live") ~> routes ~> check {
          status shouldBe StatusCodes.OK
          contentType shouldBe ContentTypes.`application/json`
          header[`Cache-Control`].map(_.value) shouldBe Some("no-store")
          responseAs[String] shouldBe """{"status":"up"}"""
        }
      finally repo.down = false
    }
  }
}
