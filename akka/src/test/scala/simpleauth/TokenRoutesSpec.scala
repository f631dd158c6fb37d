package simpleauth

import akka.http.scaladsl.model.*
import akka.http.scaladsl.model.headers.*
import akka.http.scaladsl.testkit.{RouteTestTimeout, ScalatestRouteTest}
import akka.stream.scaladsl.Source
import akka.util.ByteString
import java.net.InetAddress
import java.util.UUID
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import scala.concurrent.duration.*
import spray.json.*

class TokenRoutesSpec extends AnyWordSpec with Matchers with ScalatestRouteTest {
  given RouteTestTimeout = RouteTestTimeout(10.seconds)

  private val john = User(UUID.randomUUID(), "johndoe", "John Doe", "john@example.com",
    "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=")
  private val jane = User(UUID.randomUUID(), "janeroe", "Jane Roe", "jane@example.com",
    "$argon2id$v=19$m=19456,t=2,p=1$/aNuSw+NVpEX1i/cSRL/0Q$7ANI+9Bn7BQexYE+jCxcw3Ys0DheKsm8wAf+7WstZAs")
  private val broken = User(UUID.randomUUID(), "broken", "Broken Hash", "broken@example.com", "$bcrypt$2b$10$xyz")

  /** In-memory users and sessions; `down` makes every call fail the way an unreachable database does. */
  private val repo = new InMemoryStore(List(john, jane, broken))
  private val routes = TestRoutes(repo, TestKeys.metrics())

  private val InvalidGrant = """{"error":"invalid_grant","error_description":"invalid username or password"}"""
  private val InvalidRefreshToken = """{"error":"invalid_grant","error_description":"invalid refresh token"}"""
  private val TooManyFailedLogins =
    """{"error":"temporarily_unavailable","error_description":"too many failed logins; try again later"}"""

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
        bodyJson.keySet shouldBe Set("access_token", "id_token", "token_type", "expires_in", "refresh_token")
        bodyJson("token_type") shouldBe JsString("Bearer")
        bodyJson("expires_in") shouldBe JsNumber(600)
        // The contract's bytes: its member order, compact.
        val jwt = "[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+"
        responseAs[String] should fullyMatch regex
          s"""\\{"access_token":"$jwt","id_token":"$jwt","token_type":"Bearer","expires_in":600,"refresh_token":"[A-Za-z0-9_-]{43}"\\}"""
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
      for (path <- List("/health", "/health/live", "/.well-known/jwks.json", "/.well-known/openid-configuration"))
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

    "take a client_id from JSON or form into the access token, DEFAULT_CLIENT_ID when there is none" in {
      def clientId(request: HttpRequest): String = request ~> routes ~> check {
        status shouldBe StatusCodes.OK
        val access = com.nimbusds.jwt.SignedJWT.parse(bodyJson("access_token").asInstanceOf[JsString].value)
        access.getHeader.getType.getType shouldBe "at+jwt"
        access.getJWTClaimsSet.getStringClaim("client_id")
      }
      clientId(Post("/token", json("""{"username":"john@example.com","password":"TopSecret0!","client_id":"web app ~1"}"""))) shouldBe
        "web app ~1"
      clientId(Post("/token", form("grant_type=password&username=john%40example.com&password=TopSecret0%21&client_id=cli%2Bx+y"))) shouldBe
        "cli+x y"
      clientId(Post("/token", json(s"""{"username":"john@example.com","password":"TopSecret0!","client_id":"${"c" * 128}"}"""))) shouldBe
        "c" * 128
      clientId(Post("/token", json("""{"username":"john@example.com","password":"TopSecret0!"}"""))) shouldBe "public"
      clientId(Post("/token", form("grant_type=password&username=john%40example.com&password=TopSecret0%21"))) shouldBe "public"
    }

    "refuse a client_id of the wrong type, empty, too long, with a character outside %x20-7E, or repeated in a form" in {
      val login = "\"username\":\"john@example.com\",\"password\":\"TopSecret0!\""
      for (value <- List("null", "1", "{}", "[]", "true", "\"\"", s"\"${"c" * 129}\"", "\"caf\u00e9\"", "\"tab\\there\"",
             "\"del\u007f\""))
        Post("/token", json(s"{$login,\"client_id\":$value}")) ~> routes ~> check {
          withClue(value) {
            status shouldBe StatusCodes.BadRequest
            checkErrorShape()
            errorCode shouldBe "invalid_request"
          }
        }
      val formLogin = "grant_type=password&username=john%40example.com&password=TopSecret0%21"
      for (extra <- List("&client_id=", "&client_id=a&client_id=a", s"&client_id=${"c" * 129}", "&client_id=caf%C3%A9",
             "&client_id=new%0Aline"))
        Post("/token", form(formLogin + extra)) ~> routes ~> check {
          withClue(extra) {
            status shouldBe StatusCodes.BadRequest
            errorCode shouldBe "invalid_request"
          }
        }
    }

    "check client_id before the database is asked" in {
      repo.lookups = Nil
      Post("/token", json("""{"username":"john@example.com","password":"TopSecret0!","client_id":""}""")) ~> routes ~> check {
        errorCode shouldBe "invalid_request"
      }
      repo.lookups shouldBe Nil
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

  private def login(request: HttpRequest = Post("/token", json("""{"username":"john@example.com","password":"TopSecret0!"}""")),
                    on: akka.http.scaladsl.server.Route = routes): Map[String, JsValue] = {
    var body = Map.empty[String, JsValue]
    request ~> on ~> check {
      status shouldBe StatusCodes.OK
      body = bodyJson
    }
    body
  }
  private def str(v: JsValue) = v.asInstanceOf[JsString].value
  private def claim(token: JsValue, name: String) = com.nimbusds.jwt.SignedJWT.parse(str(token)).getJWTClaimsSet.getStringClaim(name)

  "POST /token with the refresh grant" should {
    "answer five members, a new refresh token and the session's sid, for JSON and form bodies" in {
      val first = login()
      val second = Post("/token", json(s"""{"grant_type":"refresh_token","refresh_token":"${str(first("refresh_token"))}"}""")) ~>
        routes ~> check {
          status shouldBe StatusCodes.OK
          header[`Cache-Control`].map(_.value) shouldBe Some("no-store")
          header("Pragma").map(_.value) shouldBe Some("no-cache")
          bodyJson.keySet shouldBe Set("access_token", "id_token", "token_type", "expires_in", "refresh_token")
          bodyJson
        }
      second("refresh_token") should not be first("refresh_token")
      claim(second("access_token"), "sid") shouldBe claim(first("access_token"), "sid")
      val third = login(Post("/token", form(s"grant_type=refresh_token&refresh_token=${str(second("refresh_token"))}&client_id=public")))
      claim(third("id_token"), "sid") shouldBe claim(first("id_token"), "sid")
    }

    "refuse a malformed, unknown or reused token with exactly the refresh token's invalid_grant bytes" in {
      val first = login()
      val refresh = s"""{"grant_type":"refresh_token","refresh_token":"${str(first("refresh_token"))}"}"""
      Post("/token", json(refresh)) ~> routes ~> check { status shouldBe StatusCodes.OK }
      for (body <- List(refresh, // reused: the family is revoked
             """{"grant_type":"refresh_token","refresh_token":"not-a-token"}""",
             s"""{"grant_type":"refresh_token","refresh_token":"${"Z" * 43}"}"""))
        Post("/token", json(body)) ~> routes ~> check {
          withClue(body) {
            status shouldBe StatusCodes.BadRequest
            checkErrorShape()
            responseAs[String] shouldBe InvalidRefreshToken
          }
        }
    }

    "answer 503 with Retry-After: 1 when the database is down" in {
      repo.down = true
      try
        Post("/token", form(s"grant_type=refresh_token&refresh_token=${"A" * 43}")) ~> routes ~> check {
          status shouldBe StatusCodes.ServiceUnavailable
          header("Retry-After").map(_.value) shouldBe Some("1")
          errorCode shouldBe "temporarily_unavailable"
        }
      finally repo.down = false
    }
  }

  "POST /revoke" should {
    "answer 200, empty, no-store, for a refresh token (its family revoked), an access token or any string" in {
      val first = login()
      val token = str(first("refresh_token"))
      for (entity <- List(json(s"""{"token":"$token"}"""), form(s"token=$token&token_type_hint=refresh_token"),
             json(s"""{"token":${first("access_token")}}"""), form("token=whatever")))
        Post("/revoke", entity) ~> routes ~> check {
          status shouldBe StatusCodes.OK
          header[`Cache-Control`].map(_.value) shouldBe Some("no-store")
          responseAs[String] shouldBe ""
        }
      Post("/token", json(s"""{"grant_type":"refresh_token","refresh_token":"$token"}""")) ~> routes ~> check {
        responseAs[String] shouldBe InvalidRefreshToken
      }
    }

    "answer 400 invalid_request for a missing, empty, non-string or repeated token; 415 and 413 as /token" in {
      for (entity <- List(json("{}"), json("""{"token":""}"""), json("""{"token":5}"""), json("""{"token":null}"""), json("[1]"),
             form(""), form("token="), form("token=a&token=b")))
        Post("/revoke", entity) ~> routes ~> check {
          withClue(entity) {
            status shouldBe StatusCodes.BadRequest
            checkErrorShape()
            errorCode shouldBe "invalid_request"
          }
        }
      Post("/revoke", HttpEntity(ContentTypes.`text/plain(UTF-8)`, "token=x")) ~> routes ~> check {
        status shouldBe StatusCodes.UnsupportedMediaType
        checkErrorShape()
      }
      Post("/revoke", form("token=" + "a" * 9000)) ~> routes ~> check {
        status shouldBe StatusCodes.ContentTooLarge
        checkErrorShape()
      }
    }

    "answer 503 with Retry-After: 1 when the database cannot be asked" in {
      repo.down = true
      try
        Post("/revoke", json(s"""{"token":"${"A" * 43}"}""")) ~> routes ~> check {
          status shouldBe StatusCodes.ServiceUnavailable
          checkErrorShape()
          header("Retry-After").map(_.value) shouldBe Some("1")
        }
      finally repo.down = false
    }
  }

  "the login limits over HTTP" should {
    def from(ip: String) = addAttribute(AttributeKeys.remoteAddress, RemoteAddress(InetAddress.getByName(ip)))

    "lock the socket's peer after its failures: 429, Retry-After, no-store, the contract's bytes" in {
      val limited = TestRoutes(repo, TestKeys.metrics(), addresses = new AddressLimiter(2, 300))
      for (_ <- 1 to 2)
        Post("/token", json("""{"username":"john@example.com","password":"wrong"}""")) ~> from("192.0.2.1") ~> limited ~> check {
          responseAs[String] shouldBe InvalidGrant
        }
      Post("/token", json("""{"username":"john@example.com","password":"TopSecret0!"}""")) ~> from("192.0.2.1") ~> limited ~> check {
        status shouldBe StatusCodes.TooManyRequests
        checkErrorShape()
        header("Retry-After").map(_.value.toInt).getOrElse(0) should (be >= 299 and be <= 300)
        responseAs[String] shouldBe TooManyFailedLogins
      }
      Post("/token", json("""{"username":"john@example.com","password":"TopSecret0!"}""")) ~> from("192.0.2.2") ~> limited ~> check {
        status shouldBe StatusCodes.OK
      }
      // The refresh grant is not limited.
      val tokens = login(Post("/token", json("""{"username":"jane@example.com","password":"CorrectHorse9!"}""")), limited)
      Post("/token", json(s"""{"grant_type":"refresh_token","refresh_token":"${str(tokens("refresh_token"))}"}""")) ~>
        from("192.0.2.1") ~> limited ~> check { status shouldBe StatusCodes.OK }
    }

    "take the address from X-Forwarded-For only when the peer is a trusted proxy, never from Fly-Client-IP" in {
      val addresses = new AddressLimiter(1, 300)
      val trusting = TestRoutes(repo, TestKeys.metrics(), addresses = addresses,
        trustedProxies = TrustedProxies.parse("10.0.0.0/8").fold(fail(_), identity))
      def ghost(peer: String, headers: (String, String)*) =
        (Post("/token", json("""{"username":"ghost@example.com","password":"x"}""")) ~> from(peer))
          .withHeaders(headers.map((name, value) => RawHeader(name, value))) ~> trusting ~> check { status shouldBe StatusCodes.BadRequest }
      ghost("10.0.0.1", "Fly-Client-IP" -> "203.0.113.9", "X-Forwarded-For" -> "203.0.113.5, 10.1.1.1")
      addresses.count("203.0.113.5") shouldBe 1
      addresses.count("203.0.113.9") shouldBe 0
      addresses.count("10.0.0.1") shouldBe 0
      ghost("192.0.2.50", "X-Forwarded-For" -> "203.0.113.6") // an untrusted peer: its headers are not read
      addresses.count("192.0.2.50") shouldBe 1
      addresses.count("203.0.113.6") shouldBe 0
      ghost("10.0.0.1", "X-Forwarded-For" -> "2001:db8:1:2::1") // an IPv6 client counts for its /64
      Post("/token", json("""{"username":"john@example.com","password":"TopSecret0!"}""")) ~> from("10.0.0.1") ~>
        addHeader(RawHeader("X-Forwarded-For", "2001:db8:1:2:ffff::7")) ~> trusting ~> check {
          status shouldBe StatusCodes.TooManyRequests
        }
    }

    "answer 429 for a locked username" in {
      val store = new InMemoryStore(List(john), maxFailures = 1)
      val locking = TestRoutes(store, TestKeys.metrics())
      Post("/token", form("grant_type=password&username=john%40example.com&password=nope")) ~> locking ~> check {
        responseAs[String] shouldBe InvalidGrant
      }
      Post("/token", form("grant_type=password&username=john%40example.com&password=TopSecret0%21")) ~> locking ~> check {
        status shouldBe StatusCodes.TooManyRequests
        checkErrorShape()
        header("Retry-After") shouldBe defined
        responseAs[String] shouldBe TooManyFailedLogins
      }
    }

    "shed an argon2id check with the database's 503 and Retry-After: 1 when no permit is free" in {
      val shedding = TestRoutes(repo, TestKeys.metrics(), checks = new PasswordCheckLimit(0))
      Post("/token", json("""{"username":"jane@example.com","password":"CorrectHorse9!"}""")) ~> shedding ~> check {
        status shouldBe StatusCodes.ServiceUnavailable
        checkErrorShape()
        header("Retry-After").map(_.value) shouldBe Some("1")
        responseAs[String] shouldBe ApiError.temporarilyUnavailable.response.entity.asInstanceOf[HttpEntity.Strict].data.utf8String
      }
      Post("/token", json("""{"username":"john@example.com","password":"TopSecret0!"}""")) ~> shedding ~> check {
        status shouldBe StatusCodes.OK // legacy HMAC checks are not bounded
      }
    }
  }

  "methods and paths" should {
    val Foo = HttpMethod.custom("FOO")
    val Query = HttpMethod.custom("QUERY")
    val body = json("""{"username":"john@example.com","password":"TopSecret0!"}""")
    // akka-http's model cannot hold a TRACE with content (its parser refuses one before routing).
    def entities(method: HttpMethod) = if (method.isEntityAccepted) List(HttpEntity.Empty, body) else List(HttpEntity.Empty)

    "answer 405 with Allow: POST on /token and /revoke to every other method, with or without a body" in {
      for (path <- List("/token", "/revoke");
           method <- List(HttpMethods.GET, HttpMethods.PUT, HttpMethods.DELETE, HttpMethods.PATCH,
             HttpMethods.OPTIONS, HttpMethods.TRACE, Foo, Query);
           entity <- entities(method))
        HttpRequest(method, path, entity = entity) ~> routes ~> check {
          withClue(s"$method $path ${entity.contentLengthOption}") {
            status shouldBe StatusCodes.MethodNotAllowed
            header[Allow].map(_.value) shouldBe Some("POST")
            checkErrorShape()
            errorCode shouldBe "invalid_request"
          }
        }
      // HEAD: the same status and headers (the server drops the body of a HEAD answer).
      for (path <- List("/token", "/revoke"))
        Head(path) ~> routes ~> check {
          status shouldBe StatusCodes.MethodNotAllowed
          header[Allow].map(_.value) shouldBe Some("POST")
        }
    }

    "answer GET and HEAD on the read-only endpoints, 405 with Allow: GET, HEAD to anything else" in {
      for (path <- List("/health", "/health/live", "/.well-known/jwks.json", "/.well-known/openid-configuration")) {
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
      for (path <- List("/", "/nope", "/token/", "/revoke/", "/health/", "/health/live/x", "/TOKEN");
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
        val key = Vectors.key("rsa-2048")
        JsonParser(responseAs[String]) shouldBe JsObject("keys" -> JsArray(key.jwk))
        val n = key.jwk.fields("n").asInstanceOf[JsString].value
        // The contract's bytes, member order included.
        responseAs[String] shouldBe
          s"""{"keys":[{"kty":"RSA","use":"sig","alg":"RS256","kid":"${key.kid}","n":"$n","e":"AQAB"}]}"""
      }
    }
  }

  "GET /.well-known/openid-configuration" should {
    "serve the discovery document with the contract's members" in {
      Get("/.well-known/openid-configuration") ~> routes ~> check {
        status shouldBe StatusCodes.OK
        contentType shouldBe ContentTypes.`application/json`
        header[`Cache-Control`].map(_.value) shouldBe Some("public, max-age=300")
        def strings(values: String*) = JsArray(values.map(JsString(_)).toVector)
        bodyJson shouldBe Map(
          "issuer" -> JsString("http://localhost:8080"),
          "token_endpoint" -> JsString("http://localhost:8080/token"),
          "jwks_uri" -> JsString("http://localhost:8080/.well-known/jwks.json"),
          "grant_types_supported" -> strings("password", "refresh_token"),
          "revocation_endpoint" -> JsString("http://localhost:8080/revoke"),
          "revocation_endpoint_auth_methods_supported" -> strings("none"),
          "response_types_supported" -> JsArray(),
          "subject_types_supported" -> strings("public"),
          "id_token_signing_alg_values_supported" -> strings("RS256"),
          "token_endpoint_auth_methods_supported" -> strings("none"),
          "claims_supported" -> strings("iss", "aud", "sub", "iat", "exp", "sid", "jti", "client_id", "name",
            "preferred_username", "email", "at_hash")
        )
      }
    }

    "join an issuer that ends in / without doubling it, the issuer verbatim" in {
      val doc = OpenIdConfiguration.from("https://issuer.example/base/", KeyAlgorithm.ES256)
      (doc.issuer, doc.token_endpoint, doc.jwks_uri) shouldBe
        ("https://issuer.example/base/", "https://issuer.example/base/token", "https://issuer.example/base/.well-known/jwks.json")
    }
  }

  "a key reload" should {
    "change what the JWKS, the discovery document and new tokens say, and nothing else" in {
      val metrics = TestKeys.metrics()
      var next: Either[SettingsError, KeySet] = Left(SettingsError("bad key"))
      val ring = new KeyRing(TestKeys.keySet(metrics), () => next, metrics)
      val reloading = TestRoutes(repo, metrics, Some(ring))
      def alg(path: String) = Get(path) ~> reloading ~> check { responseAs[String] }
      def tokenHeader() =
        Post("/token", json("""{"username":"john@example.com","password":"TopSecret0!"}""")) ~> reloading ~> check {
          status shouldBe StatusCodes.OK
          com.nimbusds.jwt.SignedJWT.parse(bodyJson("access_token").asInstanceOf[JsString].value).getHeader
        }
      tokenHeader().getAlgorithm.getName shouldBe "RS256"
      ring.reload().isLeft shouldBe true
      alg("/.well-known/openid-configuration") should include(""""id_token_signing_alg_values_supported":["RS256"]""")
      val ed = Vectors.signingKey("keys/dev-ed25519.pem")
      next = Right(TestKeys.keySet(metrics, ed))
      ring.reload().isRight shouldBe true
      alg("/.well-known/openid-configuration") should include(""""id_token_signing_alg_values_supported":["EdDSA"]""")
      alg("/.well-known/jwks.json") should include(s""""kid":"${ed.kid}"""")
      val header = tokenHeader()
      (header.getAlgorithm.getName, header.getKeyID) shouldBe ("EdDSA", ed.kid)
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
