package simpleauth

import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.nio.charset.{CharacterCodingException, CodingErrorAction, StandardCharsets}
import scala.collection.mutable

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

/** Why a request body was refused (spec/README.md, "JSON body", "Form body", "Limits"); each stack's `ApiError` maps it. */
enum RequestError {
  /** 400 `invalid_request`, with its `error_description`. */
  case InvalidRequest(description: String)
  /** 400 `unsupported_grant_type`. */
  case UnsupportedGrantType
}

/**
 * A member of a JSON body as request parsing sees it: a string, or anything else. Each stack parses JSON with its
 * own library and hands the object's members over in order, a repeated name as often as it occurs.
 */
enum JsonMember {
  case Str(value: String)
  case Other
}

/**
 * Reads the two body encodings of POST /token and POST /revoke (contract §1, §3, spec/README.md): forms from raw
 * bytes, JSON from the members of the object a stack's JSON library parsed (after [[utf8]]), so that invalid UTF-8,
 * repeated parameters and JSON type errors are all answered with the contract's codes instead of a framework's.
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

  /** The largest body accepted (spec/README.md, "Size"): one more byte is 413. */
  val MaxBodyBytes = 8192
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

  /** The two media types of a request body (spec/README.md, "Content types"). */
  enum BodyKind {
    case Json, Form
  }

  /** The body kind of a `Content-Type` value: its media type, case-insensitively, parameters ignored; else None (415). */
  def kindOf(contentType: Option[String]): Option[BodyKind] =
    contentType.map(_.takeWhile(_ != ';').trim.toLowerCase) match {
      case Some("application/json")                  => Some(BodyKind.Json)
      case Some("application/x-www-form-urlencoded") => Some(BodyKind.Form)
      case _                                         => None
    }

  /**
   * A JSON object's members: `grant_type` optional (absent means `password`), then the members of its grant —
   * `username` and `password`, or `refresh_token` (the others ignored) — and the optional `client_id`. A member the
   * grant reads may be given once.
   */
  def fromJson(members: Seq[(String, JsonMember)]): Either[RequestError, TokenRequest] =
    for {
      _     <- once(members, "grant_type")
      grant <- members.collectFirst { case ("grant_type", v) => v } match {
                 case None                   => Right("password")
                 case Some(JsonMember.Str(g)) => Right(g)
                 case Some(_)                => invalid("grant_type must be a string")
               }
      request <- grant match {
                   case "password" =>
                     for {
                       username <- jsonString(members, "username")
                       password <- jsonString(members, "password")
                       clientId <- jsonString(members, "client_id")
                       request  <- passwordGrant(username, password, clientId)
                     } yield request
                   case "refresh_token" =>
                     for {
                       token    <- jsonString(members, "refresh_token")
                       clientId <- jsonString(members, "client_id")
                       request  <- refreshGrant(token, clientId)
                     } yield request
                   case _ => Left(RequestError.UnsupportedGrantType)
                 }
    } yield request

  /**
   * A form (RFC 6749 §4.3 and §6): `grant_type` required, then `username` and `password`, or `refresh_token`;
   * `client_id` optional; each of them at most once, other parameters ignored.
   */
  def fromForm(body: Array[Byte]): Either[RequestError, TokenRequest] =
    for {
      params  <- formParams(body)
      grant   <- single(params, "grant_type")
      request <- grant match {
                   case None | Some("") => invalid("grant_type is required")
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
                   case Some(_) => Left(RequestError.UnsupportedGrantType)
                 }
    } yield request

  /** POST /revoke as JSON: `{"token": "..."}` (given once), other members ignored. */
  def revokeFromJson(members: Seq[(String, JsonMember)]): Either[RequestError, RevokeRequest] =
    jsonString(members, "token").flatMap(revoke)

  /** POST /revoke as a form: `token`, at most once; `token_type_hint`, `client_id` and the rest ignored. */
  def revokeFromForm(body: Array[Byte]): Either[RequestError, RevokeRequest] =
    formParams(body).flatMap(single(_, "token")).flatMap(revoke)

  /** A body's text, which must be valid UTF-8 (spec/README.md: invalid UTF-8 is 400 `invalid_request`). */
  def utf8(body: Array[Byte]): Either[RequestError, String] =
    try
      Right(
        StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(body))
          .toString
      )
    catch { case _: CharacterCodingException => invalid("body is not valid UTF-8") }

  /** The refusal of a body its stack's JSON library could not parse. */
  val NotJson: RequestError = RequestError.InvalidRequest("body is not valid JSON")

  /** The refusal of JSON that is not one object. */
  val NotAnObject: RequestError = RequestError.InvalidRequest("body must be a JSON object")

  private def invalid(description: String): Left[RequestError, Nothing] = Left(RequestError.InvalidRequest(description))

  private def revoke(token: Option[String]): Either[RequestError, RevokeRequest] =
    token.filter(_.nonEmpty).map(RevokeRequest(_)).toRight(RequestError.InvalidRequest("token is required"))

  private def formParams(body: Array[Byte]): Either[RequestError, Map[String, List[String]]] =
    utf8(body).flatMap(parseForm)

  private def once(members: Seq[(String, JsonMember)], name: String): Either[RequestError, Unit] =
    if (members.count(_._1 == name) > 1) invalid(s"$name given more than once") else Right(())

  private def jsonString(members: Seq[(String, JsonMember)], name: String): Either[RequestError, Option[String]] =
    once(members, name).flatMap { _ =>
      members.collectFirst { case (`name`, v) => v } match {
        case None                   => Right(None)
        case Some(JsonMember.Str(s)) => Right(Some(s))
        case Some(_)                => invalid(s"$name must be a string")
      }
    }

  private def passwordGrant(
      username: Option[String],
      password: Option[String],
      clientId: Option[String]
  ): Either[RequestError, TokenRequest] =
    (username, password) match {
      case (None | Some(""), _) => invalid("username is required")
      case (_, None | Some("")) => invalid("password is required")
      case (Some(u), Some(p)) =>
        if (u.indexOf('\u0000') >= 0)
          // PostgreSQL text cannot hold NUL: refuse it here rather than fail in the driver.
          invalid("username must not contain NUL")
        else if (u.codePointCount(0, u.length) > MaxUsernameCodePoints)
          invalid(s"username is longer than $MaxUsernameCodePoints characters")
        else if (p.getBytes(StandardCharsets.UTF_8).length > MaxPasswordBytes)
          invalid(s"password is longer than $MaxPasswordBytes bytes")
        else checkClientId(clientId).map(Password(u, p, _))
    }

  /** The token's shape is the service's to judge (a malformed one is `invalid_grant`, not `invalid_request`). */
  private def refreshGrant(token: Option[String], clientId: Option[String]): Either[RequestError, TokenRequest] =
    token match {
      case None | Some("") => invalid("refresh_token is required")
      case Some(t)         => checkClientId(clientId).map(Refresh(t, _))
    }

  private def checkClientId(clientId: Option[String]): Either[RequestError, Option[String]] =
    clientId.flatMap(clientIdProblem) match {
      case Some(problem) => invalid(s"client_id $problem")
      case None          => Right(clientId)
    }

  /** RFC 6749 §3.2: request parameters must not be included more than once. */
  private def single(params: Map[String, List[String]], name: String): Either[RequestError, Option[String]] =
    params.getOrElse(name, Nil) match {
      case Nil      => Right(None)
      case v :: Nil => Right(Some(v))
      case _        => invalid(s"$name given more than once")
    }

  /** application/x-www-form-urlencoded: `+` is a space, %XX are UTF-8 octets. */
  private def parseForm(text: String): Either[RequestError, Map[String, List[String]]] = {
    val out = mutable.LinkedHashMap.empty[String, List[String]]
    val pairs = text.split("&", -1).iterator.filter(_.nonEmpty)
    var error: Option[RequestError] = None
    while (error.isEmpty && pairs.hasNext) {
      val pair = pairs.next()
      val eq = pair.indexOf('=')
      val (k, v) = if (eq < 0) (pair, "") else (pair.substring(0, eq), pair.substring(eq + 1))
      (percentDecode(k), percentDecode(v)) match {
        case (Some(key), Some(value)) => out.update(key, out.getOrElse(key, Nil) :+ value)
        case _                        => error = Some(RequestError.InvalidRequest("body is not valid form encoding"))
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
