package simpleauth

import akka.util.ByteString
import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.nio.charset.{CharacterCodingException, CodingErrorAction, StandardCharsets}
import scala.collection.mutable
import scala.util.control.NonFatal
import spray.json.*

/**
 * A validated POST /token request: one of the two grants (contract §1). `clientId` is the request's `client_id`,
 * if it names one.
 */
sealed trait TokenRequest {
  def clientId: Option[String]
}

/** A validated POST /revoke request (contract §3): the token whose family is to be revoked. */
final case class RevokeRequest(token: String) {
  override def toString: String = "RevokeRequest(***)"
}

/**
 * Reads the two body encodings of POST /token (contract §1, spec/README.md) from
 * raw bytes, so that invalid UTF-8, repeated form parameters and JSON type
 * errors are all answered with the contract's codes instead of the framework's.
 */
object TokenRequest {
  /** The password grant (RFC 6749 §4.3). */
  final case class Password(username: String, password: String, clientId: Option[String] = None) extends TokenRequest {
    override def toString: String = s"Password($username, ***, ${clientId.getOrElse("-")})"
  }

  /** The refresh grant (RFC 6749 §6). */
  final case class Refresh(refreshToken: String, clientId: Option[String] = None) extends TokenRequest {
    override def toString: String = s"Refresh(***, ${clientId.getOrElse("-")})"
  }

  val MaxUsernameCodePoints = 254
  val MaxPasswordBytes = 1024
  val MaxClientIdChars = 128

  /**
   * Why `clientId` breaks the rule of a `client_id` (RFC 6749 §2.2 and Appendix A's VSCHAR: 1-128 characters
   * of %x20-7E), or None. Shared with `DEFAULT_CLIENT_ID` ([[Settings]]).
   */
  def clientIdProblem(clientId: String): Option[String] =
    if (clientId.isEmpty) Some("must not be empty")
    else if (clientId.length > MaxClientIdChars) Some(s"is longer than $MaxClientIdChars characters")
    else if (clientId.exists(c => c < ' ' || c > '~')) Some("must be printable ASCII (%x20-7E)")
    else None

  /**
   * A JSON object: `grant_type` optional (absent means `password`), then the members of its grant —
   * `username` and `password`, or `refresh_token` (the others ignored) — and the optional `client_id`.
   */
  def fromJson(body: ByteString): Either[ApiError, TokenRequest] =
    for {
      obj   <- jsonObject(body)
      grant <- obj.get("grant_type") match {
                 case None              => Right("password")
                 case Some(JsString(g)) => Right(g)
                 case Some(_)           => Left(ApiError.invalidRequest("grant_type must be a string"))
               }
      request <- grant match {
                   case "password" =>
                     for {
                       username <- jsonString(obj, "username")
                       password <- jsonString(obj, "password")
                       clientId <- jsonString(obj, "client_id")
                       request  <- passwordGrant(username, password, clientId)
                     } yield request
                   case "refresh_token" =>
                     for {
                       token    <- jsonString(obj, "refresh_token")
                       clientId <- jsonString(obj, "client_id")
                       request  <- refreshGrant(token, clientId)
                     } yield request
                   case _ => Left(ApiError.unsupportedGrantType)
                 }
    } yield request

  /**
   * A form (RFC 6749 §4.3 and §6): `grant_type` required, then `username` and `password`, or `refresh_token`;
   * `client_id` optional; each of them at most once, other parameters ignored.
   */
  def fromForm(body: ByteString): Either[ApiError, TokenRequest] =
    for {
      params  <- formParams(body)
      grant   <- single(params, "grant_type")
      request <- grant match {
                   case None | Some("") => Left(ApiError.invalidRequest("grant_type is required"))
                   case Some("password") =>
                     for {
                       username <- single(params, "username")
                       password <- single(params, "password")
                       clientId <- single(params, "client_id")
                       request  <- passwordGrant(username, password, clientId)
                     } yield request
                   case Some("refresh_token") =>
                     for {
                       token    <- single(params, "refresh_token")
                       clientId <- single(params, "client_id")
                       request  <- refreshGrant(token, clientId)
                     } yield request
                   case Some(_) => Left(ApiError.unsupportedGrantType)
                 }
    } yield request

  /** POST /revoke as JSON: `{"token": "..."}`, other members ignored. */
  def revokeFromJson(body: ByteString): Either[ApiError, RevokeRequest] =
    jsonObject(body).flatMap(jsonString(_, "token")).flatMap(revoke)

  /** POST /revoke as a form: `token`, at most once; `token_type_hint`, `client_id` and the rest ignored. */
  def revokeFromForm(body: ByteString): Either[ApiError, RevokeRequest] =
    formParams(body).flatMap(single(_, "token")).flatMap(revoke)

  private def revoke(token: Option[String]): Either[ApiError, RevokeRequest] =
    token.filter(_.nonEmpty).map(RevokeRequest(_)).toRight(ApiError.invalidRequest("token is required"))

  private def jsonObject(body: ByteString): Either[ApiError, Map[String, JsValue]] =
    for {
      text <- utf8(body)
      json <- (try Right(JsonParser(text))
               catch { case NonFatal(_) => Left(ApiError.invalidRequest("body is not valid JSON")) })
      obj  <- json match {
                case JsObject(fields) => Right(fields)
                case _                => Left(ApiError.invalidRequest("body must be a JSON object"))
              }
    } yield obj

  private def formParams(body: ByteString): Either[ApiError, Map[String, List[String]]] =
    utf8(body).flatMap(parseForm)

  private def jsonString(obj: Map[String, JsValue], name: String): Either[ApiError, Option[String]] =
    obj.get(name) match {
      case None              => Right(None)
      case Some(JsString(s)) => Right(Some(s))
      case Some(_)           => Left(ApiError.invalidRequest(s"$name must be a string"))
    }

  private def passwordGrant(
      username: Option[String],
      password: Option[String],
      clientId: Option[String]
  ): Either[ApiError, TokenRequest] =
    (username, password) match {
      case (None | Some(""), _) => Left(ApiError.invalidRequest("username is required"))
      case (_, None | Some("")) => Left(ApiError.invalidRequest("password is required"))
      case (Some(u), Some(p)) =>
        if (u.indexOf('\u0000') >= 0)
          // PostgreSQL text cannot hold NUL: refuse it here rather than fail in the driver.
          Left(ApiError.invalidRequest("username must not contain NUL"))
        else if (u.codePointCount(0, u.length) > MaxUsernameCodePoints)
          Left(ApiError.invalidRequest(s"username is longer than $MaxUsernameCodePoints characters"))
        else if (p.getBytes(StandardCharsets.UTF_8).length > MaxPasswordBytes)
          Left(ApiError.invalidRequest(s"password is longer than $MaxPasswordBytes bytes"))
        else checkClientId(clientId).map(Password(u, p, _))
    }

  /** The token's shape is the service's to judge (a malformed one is `invalid_grant`, not `invalid_request`). */
  private def refreshGrant(token: Option[String], clientId: Option[String]): Either[ApiError, TokenRequest] =
    token match {
      case None | Some("") => Left(ApiError.invalidRequest("refresh_token is required"))
      case Some(t)         => checkClientId(clientId).map(Refresh(t, _))
    }

  private def checkClientId(clientId: Option[String]): Either[ApiError, Option[String]] =
    clientId.flatMap(clientIdProblem) match {
      case Some(problem) => Left(ApiError.invalidRequest(s"client_id $problem"))
      case None          => Right(clientId)
    }

  /** RFC 6749 §3.2: request parameters must not be included more than once. */
  private def single(params: Map[String, List[String]], name: String): Either[ApiError, Option[String]] =
    params.getOrElse(name, Nil) match {
      case Nil      => Right(None)
      case v :: Nil => Right(Some(v))
      case _        => Left(ApiError.invalidRequest(s"$name given more than once"))
    }

  private def utf8(body: ByteString): Either[ApiError, String] =
    try
      Right(
        StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(body.asByteBuffer)
          .toString
      )
    catch { case _: CharacterCodingException => Left(ApiError.invalidRequest("body is not valid UTF-8")) }

  /** application/x-www-form-urlencoded: `+` is a space, %XX are UTF-8 octets. */
  private def parseForm(text: String): Either[ApiError, Map[String, List[String]]] = {
    val out = mutable.LinkedHashMap.empty[String, List[String]]
    val pairs = text.split("&", -1).iterator.filter(_.nonEmpty)
    var error: Option[ApiError] = None
    while (error.isEmpty && pairs.hasNext) {
      val pair = pairs.next()
      val eq = pair.indexOf('=')
      val (k, v) = if (eq < 0) (pair, "") else (pair.substring(0, eq), pair.substring(eq + 1))
      (percentDecode(k), percentDecode(v)) match {
        case (Some(key), Some(value)) => out.update(key, out.getOrElse(key, Nil) :+ value)
        case _                        => error = Some(ApiError.invalidRequest("body is not valid form encoding"))
      }
    }
    error.toLeft(out.toMap)
  }

  private def percentDecode(s: String): Option[String] = {
    if (s.indexOf('%') < 0) return Some(s.replace('+', ' '))
    val bytes = new ByteArrayOutputStream(s.length)
    val raw = s.getBytes(StandardCharsets.UTF_8)
    var i = 0
    while (i < raw.length) {
      raw(i) match {
        case '+' => bytes.write(' '); i += 1
        case '%' =>
          if (i + 2 >= raw.length) return None
          val hi = Character.digit(raw(i + 1).toChar, 16)
          val lo = Character.digit(raw(i + 2).toChar, 16)
          if (hi < 0 || lo < 0) return None
          bytes.write(hi * 16 + lo); i += 3
        case b => bytes.write(b.toInt); i += 1
      }
    }
    try
      Some(StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT)
        .decode(ByteBuffer.wrap(bytes.toByteArray)).toString)
    catch { case _: CharacterCodingException => None }
  }
}
