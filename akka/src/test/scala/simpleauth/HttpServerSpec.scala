package simpleauth

import akka.actor.typed.ActorSystem
import akka.actor.typed.scaladsl.Behaviors
import akka.http.impl.settings.AnyMethodParserSettings
import akka.http.scaladsl.Http
import java.io.ByteArrayOutputStream
import java.net.Socket
import java.nio.charset.StandardCharsets
import org.scalatest.BeforeAndAfterAll
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import scala.concurrent.{Await, Future}
import scala.concurrent.duration.*

/** The routes behind a real akka-http server with the service's server settings: what the request parser lets through. */
class HttpServerSpec extends AnyWordSpec with Matchers with BeforeAndAfterAll {
  private given system: ActorSystem[Nothing] = ActorSystem(Behaviors.empty[Nothing], "http-server-spec")

  private val routes = TestRoutes(new InMemoryStore(Nil), TestKeys.metrics())
  private val binding = Await.result(
    Http().newServerAt("127.0.0.1", 0).withSettings(App.serverSettings(system)).bind(routes), 20.seconds)
  private val port = binding.localAddress.getPort

  override def afterAll(): Unit = {
    Await.ready(binding.unbind(), 10.seconds)
    system.terminate()
  }

  final case class Answer(status: Int, headers: Map[String, String], body: String)

  /** Sends raw bytes on a fresh connection and reads the one answer up to the server's close. */
  private def exchange(request: String): Answer = {
    val socket = new Socket("127.0.0.1", port)
    try {
      socket.setSoTimeout(10000)
      socket.getOutputStream.write(request.getBytes(StandardCharsets.ISO_8859_1))
      socket.getOutputStream.flush()
      val in = socket.getInputStream
      val out = new ByteArrayOutputStream()
      val buf = new Array[Byte](8192)
      var n = in.read(buf)
      while (n >= 0) { out.write(buf, 0, n); n = in.read(buf) }
      val text = out.toString(StandardCharsets.ISO_8859_1)
      val (head, body) = text.splitAt(text.indexOf("\r\n\r\n"))
      val lines = head.split("\r\n").toList
      val headers = lines.tail.map(_.split(":", 2)).collect { case Array(k, v) => k.trim.toLowerCase -> v.trim }.toMap
      Answer(lines.head.split(" ")(1).toInt, headers, body.drop(4))
    } finally socket.close()
  }

  private def request(method: String, path: String, extra: String = ""): String =
    s"$method $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n$extra\r\n"

  private val jsonBody = """{"username":"a","password":"b"}"""
  private def withBody(method: String, path: String): String =
    request(method, path, s"Content-Type: application/json\r\nContent-Length: ${jsonBody.length}\r\n") + jsonBody
  private def chunked(method: String, path: String): String =
    request(method, path, "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n") +
      f"${jsonBody.length}%x\r\n$jsonBody\r\n0\r\n\r\n"
  /** Without a body, with a Content-Length body, with a chunked body. */
  private val senders: List[(String, String) => String] = List((m, p) => request(m, p), withBody, chunked)

  "The server" should {
    "hand custom method tokens to the routes: 405 on known paths, 404 elsewhere" in {
      for (method <- List("FOO", "QUERY", "PROPFIND", "get", "M-SEARCH"); send <- senders) {
        val token = exchange(send(method, "/token"))
        withClue(s"$method /token") {
          token.status shouldBe 405
          token.headers.get("allow") shouldBe Some("POST")
          token.body should include("invalid_request")
        }
        val health = exchange(send(method, "/health"))
        withClue(s"$method /health") {
          health.status shouldBe 405
          health.headers.get("allow") shouldBe Some("GET, HEAD")
        }
        val nope = exchange(send(method, "/nope"))
        withClue(s"$method /nope") {
          nope.status shouldBe 404
          nope.body shouldBe """{"error":"not_found"}"""
        }
      }
    }

    "answer standard methods with or without a chunked body" in {
      for (method <- List("PUT", "DELETE", "OPTIONS", "PATCH"); send <- senders) {
        exchange(send(method, "/health/live")).status shouldBe 405
        exchange(send(method, "/token")).headers.get("allow") shouldBe Some("POST")
      }
      exchange(request("TRACE", "/token")).status shouldBe 405
      exchange(request("TRACE", "/.well-known/jwks.json")).headers.get("allow") shouldBe Some("GET, HEAD")
    }

    "answer HEAD with the GET answer's status and headers and no body" in {
      for (path <- List("/health", "/health/live", "/.well-known/jwks.json")) {
        val get = exchange(request("GET", path))
        val head = exchange(request("HEAD", path))
        withClue(path) {
          head.status shouldBe 200
          head.headers.get("content-type") shouldBe get.headers.get("content-type")
          head.headers.get("cache-control") shouldBe get.headers.get("cache-control")
          head.body shouldBe ""
        }
      }
      val token = exchange(request("HEAD", "/token"))
      token.status shouldBe 405
      token.headers.get("allow") shouldBe Some("POST")
      token.body shouldBe ""
      exchange(request("HEAD", "/nope")).status shouldBe 404
    }

    "refuse HEAD and TRACE with content with the contract's alternative: 400 invalid_request, connection closed" in {
      // akka-http's parser refuses these before routing, so the answer is the same on every path.
      for (path <- List("/token", "/health", "/nope"); send <- senders.tail) {
        val trace = exchange(send("TRACE", path))
        withClue(s"TRACE $path") {
          trace.status shouldBe 400
          trace.headers.get("content-type") shouldBe Some("application/json")
          trace.headers.get("cache-control") shouldBe Some("no-store")
          trace.headers.get("connection") shouldBe Some("close")
          trace.body should include("\"error\":\"invalid_request\"")
          trace.body should include("TRACE request must not carry content")
        }
        val head = exchange(send("HEAD", path))
        withClue(s"HEAD $path") {
          head.status shouldBe 400
          head.headers.get("content-type") shouldBe Some("application/json")
          head.headers.get("cache-control") shouldBe Some("no-store")
          head.headers.get("connection") shouldBe Some("close")
          head.headers.get("content-length") shouldBe None
          head.body shouldBe ""
        }
      }
    }

    "refuse a method that is no token with a JSON 400" in {
      AnyMethodParserSettings.anyToken("FO\u0001O") shouldBe None
      AnyMethodParserSettings.anyToken("FO(O") shouldBe None
      AnyMethodParserSettings.anyToken("FOO").map(_.value) shouldBe Some("FOO")
      val answer = exchange(request("FO(O", "/health"))
      answer.status shouldBe 400
      answer.body should include("invalid_request")
    }
  }
}
