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
  /** A dev signing key of spec/vectors.json `keys[]`: its type, algorithm, at_hash digest, kid and public JWK. */
  final case class KeyVector(keyType: String, file: String, alg: String, atHashDigest: String, kid: String, jwk: Json.Obj)
  final case class AtHashVector(alg: String, accessToken: String, atHash: String)

  lazy val passwords: List[PasswordVector] =
    arr("passwords").map(o => PasswordVector(o.str("name"), o.str("password"), o.str("hash"), o.bool("valid"), o.bool("malformed")))

  lazy val keys: List[KeyVector] =
    arr("keys").map(o => KeyVector(o.str("type"), o.str("file"), o.str("alg"), o.str("at_hash_digest"), o.str("kid"), o.obj("jwk")))

  def key(keyType: String): KeyVector = keys.find(_.keyType == keyType).getOrElse(sys.error(s"no key $keyType in vectors.json"))

  lazy val atHashes: List[AtHashVector] =
    arr("at_hash").map(o => AtHashVector(o.str("alg"), o.str("access_token"), o.str("at_hash")))

  /** `refresh_tokens.valid[]`: 32 bytes, the token they encode to and its SHA-256; `malformed[]`: shapes to refuse. */
  final case class RefreshTokenVector(bytesHex: String, token: String, sha256Hex: String)

  lazy val refreshTokens: List[RefreshTokenVector] =
    json.obj("refresh_tokens").get("valid").collect { case Json.Arr(items) => items.toList.collect { case o: Json.Obj => o } }.getOrElse(Nil)
      .map(o => RefreshTokenVector(o.str("bytes_hex"), o.str("token"), o.str("sha256_hex")))

  lazy val malformedRefreshTokens: List[(String, String)] =
    json.obj("refresh_tokens").get("malformed").collect { case Json.Arr(items) => items.toList.collect { case o: Json.Obj => o } }.getOrElse(Nil)
      .map(o => o.str("name") -> o.str("token"))

  /** `public_key_bundle`: the bundle file, the key that signs beside it, and the JWKS a service must publish. */
  lazy val bundle: Json.Obj = json.obj("public_key_bundle")

  def readSpecFile(relative: String): String = Files.readString(specDir.resolve(relative))

  val devKeyPem: String = readSpecFile("keys/dev-rsa-2048.pem")

  /** The dev key of a type, loaded as the service loads it. */
  def signingKey(keyType: String): SigningKey =
    Keys.parsePrivateKey(readSpecFile(key(keyType).file)).fold(e => sys.error(e.message), identity)

  lazy val devKey: SigningKey = signingKey("rsa-2048")

  /** The invalid keys of spec/keys/invalid/ that are private keys (every one must be refused). */
  lazy val invalidPrivateKeys: List[String] =
    val dir = specDir.resolve("keys/invalid")
    scala.jdk.CollectionConverters.ListHasAsScala(Files.list(dir).toList).asScala.toList
      .map(p => s"keys/invalid/${p.getFileName}").filter(f => f.endsWith(".pem") && !f.contains("/public-")).sorted
