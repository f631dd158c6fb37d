package simpleauth

import java.nio.file.{Files, Path}

import zio.json.*
import zio.json.ast.Json

/** The shared vectors, read from ../spec/vectors.json relative to the stack folder (sbt forks tests there). */
object Vectors:
  val specDir: Path = Path.of("..", "spec")

  lazy val json: Json.Obj =
    Files.readString(specDir.resolve("vectors.json")).fromJson[Json] match
      case Right(o: Json.Obj) => o
      case other              => sys.error(s"cannot read spec/vectors.json: $other")

  private def arr(name: String): List[Json.Obj] =
    json.get(name).collect { case Json.Arr(items) => items.toList.collect { case o: Json.Obj => o } }.getOrElse(Nil)

  extension (o: Json.Obj)
    def str(name: String): String = o.get(name).collect { case Json.Str(s) => s }.getOrElse(sys.error(s"no $name"))
    def bool(name: String): Boolean = o.get(name).collect { case Json.Bool(b) => b }.getOrElse(false)
    def obj(name: String): Json.Obj = o.get(name).collect { case x: Json.Obj => x }.getOrElse(sys.error(s"no $name"))

  final case class PasswordVector(name: String, password: String, hash: String, valid: Boolean, malformed: Boolean)
  final case class KeyVector(file: String, kid: String, n: String, e: String)
  final case class AtHashVector(accessToken: String, atHash: String)

  lazy val passwords: List[PasswordVector] =
    arr("passwords").map(o => PasswordVector(o.str("name"), o.str("password"), o.str("hash"), o.bool("valid"), o.bool("malformed")))

  lazy val keys: List[KeyVector] =
    arr("keys").map { o =>
      val jwk = o.obj("jwk")
      KeyVector(o.str("file"), o.str("kid"), jwk.str("n"), jwk.str("e"))
    }

  lazy val atHashes: List[AtHashVector] = arr("at_hash").map(o => AtHashVector(o.str("access_token"), o.str("at_hash")))

  def readSpecFile(relative: String): String = Files.readString(specDir.resolve(relative))

  val devKeyPem: String = readSpecFile("keys/dev-rsa-2048.pem")
