package simpleauth

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}
import io.micrometer.prometheusmetrics.{PrometheusConfig, PrometheusMeterRegistry}
import spray.json.*

/** The shared test vectors and dev keys of ../spec (tests run in the stack folder). */
object Vectors {
  val specDir: Path = Paths.get("..", "spec")

  /** The service's meters on a registry of their own (no JVM meters). */
  def metrics(): Metrics = new Metrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT))

  lazy val json: JsObject =
    JsonParser(new String(Files.readAllBytes(specDir.resolve("vectors.json")), StandardCharsets.UTF_8)).asJsObject

  final case class PasswordVector(name: String, password: String, hash: String, valid: Boolean, malformed: Boolean)

  lazy val passwords: Vector[PasswordVector] =
    json.fields("passwords").asInstanceOf[JsArray].elements.map { v =>
      val f = v.asJsObject.fields
      PasswordVector(
        f("name").asInstanceOf[JsString].value,
        f("password").asInstanceOf[JsString].value,
        f("hash").asInstanceOf[JsString].value,
        f("valid") == JsTrue,
        f.get("malformed").contains(JsTrue)
      )
    }

  final case class KeyVector(file: String, kid: String, n: String, e: String)

  lazy val keys: Vector[KeyVector] =
    json.fields("keys").asInstanceOf[JsArray].elements.map { v =>
      val f = v.asJsObject.fields
      val jwk = f("jwk").asJsObject.fields
      def s(m: Map[String, JsValue], k: String) = m(k).asInstanceOf[JsString].value
      KeyVector(s(f, "file"), s(f, "kid"), s(jwk, "n"), s(jwk, "e"))
    }

  lazy val atHashes: Vector[(String, String)] =
    json.fields("at_hash").asInstanceOf[JsArray].elements.map { v =>
      val f = v.asJsObject.fields
      (f("access_token").asInstanceOf[JsString].value, f("at_hash").asInstanceOf[JsString].value)
    }

  def pem(relative: String): String =
    new String(Files.readAllBytes(specDir.resolve(relative)), StandardCharsets.US_ASCII)

  lazy val devKey: SigningKey =
    Settings.parsePkcs8RsaKey(pem("keys/dev-rsa-2048.pem")).fold(e => sys.error(e.message), identity)
}
