package simpleauth

import java.io.{BufferedReader, InputStreamReader}
import java.net.{InetSocketAddress, Socket, URI}
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.net.http.HttpRequest.BodyPublishers
import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import zio.*
import zio.http.Server
import zio.json.*
import zio.json.ast.Json
import zio.test.*

/** An in-memory users table; `down` simulates an unreachable database. */
final case class InMemoryUsers(users: Map[String, User], down: Ref[Boolean]) extends UserRepository:
  def findByEmail(email: String): IO[DatabaseUnavailable, Option[User]] =
    down.get.flatMap(d =>
      if d then ZIO.fail(DatabaseUnavailable(new java.sql.SQLTransientConnectionException("down")))
      else ZIO.succeed(users.get(email.toLowerCase))
    )
  def healthy: UIO[Boolean] = down.get.map(!_)

object InMemoryUsers:
  private def user(email: String, hash: String) = User(UUID.randomUUID(), email.takeWhile(_ != '@'), "Test User", email, hash)
  private def hashOf(name: String) = Vectors.passwords.find(_.name == name).get.hash

  val layer: ULayer[InMemoryUsers] = ZLayer {
    Ref.make(false).map { down =>
      InMemoryUsers(
        Map(
          "john@example.com"   -> user("john@example.com", hashOf("legacy-john")),
          "jane@example.com"   -> user("jane@example.com", hashOf("argon2id-owasp-floor")),
          "broken@example.com" -> user("broken@example.com", "$bcrypt$nope")
        ),
        down
      )
    }
  }

/** The routes against a real zio-http server on an open port (with the in-memory users table). */
object RoutesSpec extends ZIOSpecDefault:
  final case class Port(value: Int)

  val signerLayer: ULayer[TokenSigner] = ZLayer.succeed(TokenSigner.Live(RsaKeys.load(Vectors.devKeyPem).toOption.get, "http://localhost:8080", "channel-api", 600))

  val testConfig = AppConfig(
    host = "127.0.0.1", port = 0, database = JdbcSettings("jdbc:postgresql://unused/db", None, None), poolSize = 1,
    acquireTimeoutMs = 1000, privateKeyPem = Config.Secret(""), issuer = "http://localhost:8080", audience = "channel-api",
    tokenTtlSeconds = 600, logLevel = LogLevel.Info
  )

  val serverLayer: ZLayer[Any, Throwable, Port & InMemoryUsers] =
    ZLayer.make[Port & InMemoryUsers & UserRepository & PasswordVerifier & TokenSigner & Server](
      InMemoryUsers.layer,
      PasswordVerifier.live,
      signerLayer,
      ZLayer.succeed(Main.serverConfig(testConfig)),
      Server.live,
      ZLayer(Server.install(Api.routes).map(Port(_)))
    )

  val client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()

  final case class Reply(status: Int, headers: Map[String, String], body: String):
    def json: Json = body.fromJson[Json].toOption.getOrElse(Json.Null)
    def header(name: String): Option[String] = headers.get(name.toLowerCase)

  def send(method: String, path: String, body: Option[String] = None, contentType: Option[String] = None): ZIO[Port, Throwable, Reply] =
    ZIO.serviceWithZIO[Port] { port =>
      ZIO.attemptBlocking {
        val b = HttpRequest.newBuilder(URI.create(s"http://127.0.0.1:${port.value}$path"))
          .method(method, body.fold(BodyPublishers.noBody())(s => BodyPublishers.ofString(s)))
        contentType.foreach(ct => b.header("Content-Type", ct))
        val r = client.send(b.build(), HttpResponse.BodyHandlers.ofString())
        import scala.jdk.CollectionConverters.*
        Reply(r.statusCode(), r.headers().map().asScala.map((k, v) => k.toLowerCase -> v.get(0)).toMap, r.body())
      }
    }

  def postJson(body: String) = send("POST", "/token", Some(body), Some("application/json"))
  def postForm(body: String) = send("POST", "/token", Some(body), Some("application/x-www-form-urlencoded"))

  /** Raw HTTP/1.1 over a socket, for chunked bodies; returns the status code. */
  def raw(request: String): ZIO[Port, Throwable, (Int, String)] =
    ZIO.serviceWithZIO[Port] { port =>
      ZIO.attemptBlocking {
        val s = new Socket()
        try
          s.connect(new InetSocketAddress("127.0.0.1", port.value), 2000)
          s.setSoTimeout(5000)
          s.getOutputStream.write(request.getBytes(UTF_8)); s.getOutputStream.flush()
          val in = new BufferedReader(new InputStreamReader(s.getInputStream, UTF_8))
          val status = in.readLine().split(' ')(1).toInt
          val rest = Iterator.continually(in.readLine()).takeWhile(_ != null).mkString("\n")
          (status, rest)
        finally s.close()
      }
    }

  def chunked(body: String, chunk: Int = 1000): String =
    val chunks = body.grouped(chunk).map(c => s"${c.length.toHexString}\r\n$c\r\n").mkString
    s"POST /token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunks}0\r\n\r\n"

  val invalidGrant = """{"error":"invalid_grant","error_description":"invalid username or password"}"""

  def isError(r: Reply, status: Int, code: String) =
    r.status == status &&
      r.header("content-type").contains("application/json") &&
      r.header("cache-control").contains("no-store") &&
      r.json.asObject.flatMap(_.get("error")).contains(Json.Str(code))

  /** A JSON body of exactly `size` bytes with valid credentials (padding in an ignored member). */
  def padded(size: Int): String =
    val base = """{"username":"john@example.com","password":"TopSecret0!","pad":""}"""
    base.replace("\"pad\":\"\"", "\"pad\":\"" + ("x" * (size - base.length)) + "\"")

  def spec = suite("routes (real server)")(
    test("john (legacy) gets a token pair with no-store/no-cache, JSON and form") {
      for
        j <- postJson("""{"username":"John@Example.com","password":"TopSecret0!"}""")
        f <- postForm("grant_type=password&username=john%40example.com&password=TopSecret0%21")
      yield
        val keys = j.json.asObject.map(_.fields.map(_._1).toList)
        assertTrue(
          j.status == 200, f.status == 200,
          keys.contains(List("access_token", "id_token", "token_type", "expires_in")),
          j.json.asObject.flatMap(_.get("token_type")).contains(Json.Str("Bearer")),
          j.json.asObject.flatMap(_.get("expires_in")).contains(Json.Num(600)),
          j.header("cache-control").contains("no-store"),
          j.header("pragma").contains("no-cache"),
          j.header("content-type").contains("application/json")
        )
    },
    test("jane (argon2id) gets a token pair") {
      postJson("""{"username":"jane@example.com","password":"CorrectHorse9!"}""").map(r => assertTrue(r.status == 200))
    },
    test("wrong password, unknown user and an unusable hash give the same invalid_grant bytes") {
      for
        a <- postJson("""{"username":"john@example.com","password":"nope"}""")
        b <- postJson("""{"username":"nobody@example.com","password":"nope"}""")
        c <- postJson("""{"username":"broken@example.com","password":"TopSecret0!"}""")
        d <- postJson("""{"username":"jane@example.com","password":"CorrectHorse9?"}""")
      yield assertTrue(
        List(a, b, c, d).forall(r => r.status == 400 && r.body == invalidGrant && isError(r, 400, "invalid_grant"))
      )
    },
    test("bad bodies -> 400 invalid_request / unsupported_grant_type") {
      for
        a <- postJson("[]")
        b <- postJson("{")
        c <- postForm("grant_type=password&username=u&username=v&password=p")
        d <- postForm("grant_type=client_credentials&username=u&password=p")
      yield assertTrue(
        isError(a, 400, "invalid_request"), isError(b, 400, "invalid_request"),
        isError(c, 400, "invalid_request"), isError(d, 400, "unsupported_grant_type")
      )
    },
    test("missing or other Content-Type -> 415") {
      for
        a <- send("POST", "/token", Some("{}"), None)
        b <- send("POST", "/token", Some("{}"), Some("text/plain"))
      yield assertTrue(isError(a, 415, "invalid_request"), isError(b, 415, "invalid_request"))
    },
    test("8192 bytes accepted, 8193 -> 413 (Content-Length)") {
      for
        ok  <- postJson(padded(8192))
        big <- postJson(padded(8193))
      yield assertTrue(ok.status == 200, isError(big, 413, "invalid_request"))
    },
    test("chunked: 8192 bytes accepted, more -> 413") {
      for
        ok  <- raw(chunked(padded(8192)))
        big <- raw(chunked(padded(9000)))
      yield assertTrue(ok._1 == 200, big._1 == 413, big._2.contains("invalid_request"))
    },
    test("wrong methods -> 405 with Allow; unknown paths -> 404 not_found") {
      for
        a <- send("GET", "/token")
        b <- send("POST", "/health", Some(""), Some("application/json"))
        c <- send("DELETE", "/.well-known/jwks.json")
        d <- send("GET", "/nope")
        e <- send("POST", "/token/", Some("{}"), Some("application/json"))
      yield assertTrue(
        isError(a, 405, "invalid_request"), a.header("allow").contains("POST"),
        isError(b, 405, "invalid_request"), b.header("allow").contains("GET"),
        isError(c, 405, "invalid_request"), c.header("allow").contains("GET"),
        d.status == 404, d.body == """{"error":"not_found"}""", d.header("content-type").contains("application/json"),
        e.status == 404, e.body == """{"error":"not_found"}"""
      )
    },
    test("JWKS carries the dev key's kid with public caching") {
      send("GET", "/.well-known/jwks.json").map { r =>
        val kid = Vectors.keys.find(_.file.endsWith("dev-rsa-2048.pem")).get.kid
        assertTrue(r.status == 200, r.body.contains(kid), r.header("cache-control").contains("public, max-age=300"))
      }
    },
    test("/health/live answers up without the database, also while it is down") {
      for
        users <- ZIO.service[InMemoryUsers]
        _     <- users.down.set(true)
        live  <- send("GET", "/health/live").ensuring(users.down.set(false))
        slash <- send("GET", "/health/live/")
      yield assertTrue(
        live.status == 200, live.body == """{"status":"up"}""",
        live.header("content-type").contains("application/json"), live.header("cache-control").contains("no-store"),
        slash.status == 404
      )
    },
    test("database down -> 503 temporarily_unavailable + Retry-After: 1, /health down; then back up") {
      for
        users <- ZIO.service[InMemoryUsers]
        up1   <- send("GET", "/health")
        _     <- users.down.set(true)
        t     <- postJson("""{"username":"john@example.com","password":"TopSecret0!"}""")
        h     <- send("GET", "/health")
        _     <- users.down.set(false)
        up2   <- send("GET", "/health")
      yield assertTrue(
        up1.status == 200, up1.body == """{"status":"up"}""",
        isError(t, 503, "temporarily_unavailable"), t.header("retry-after").contains("1"),
        h.status == 503, h.body == """{"status":"down"}""",
        up2.status == 200
      )
    }
  ).provideShared(serverLayer) @@ TestAspect.sequential @@ TestAspect.withLiveClock @@ TestAspect.timeout(120.seconds)
