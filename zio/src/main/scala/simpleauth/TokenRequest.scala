package simpleauth

import java.nio.ByteBuffer
import java.nio.charset.{CharacterCodingException, CodingErrorAction, StandardCharsets}

import zio.json.*
import zio.json.ast.Json

/**
 * A syntactically valid request to `POST /token`: one of the two grants (contract §1). `clientId` is the request's
 * `client_id` (RFC 6749 §2.2), if it names one: for a password grant the access token then carries it (RFC 9068
 * §2.2); for a refresh grant the presented token must be of that client (§7).
 */
enum TokenRequest:
  def clientId: Option[String]

  /** `grant_type=password` (RFC 6749 §4.3), the default in a JSON body. */
  case Password(username: String, password: String, clientId: Option[String] = None)
  /** `grant_type=refresh_token` (RFC 6749 §6). The token's shape is checked later, as `invalid_grant` (§7). */
  case Refresh(refreshToken: String, clientId: Option[String] = None)

/** `POST /revoke` (RFC 7009, contract §3): the token whose family ends; `token_type_hint` and `client_id` are ignored. */
final case class RevokeRequest(token: String)

/** Body parsing and validation for POST /token and POST /revoke (spec/README.md "JSON body", "Form body", "Limits"). */
object TokenRequest:
  val MaxBodyBytes       = 8192
  val MaxUsernameChars   = 254
  val MaxPasswordBytes   = 1024
  val MaxClientIdChars   = 128

  /** The rule of a `client_id` and of `DEFAULT_CLIENT_ID` (RFC 6749 Appendix A's VSCHAR). */
  val ClientIdRule = "client_id must be 1-128 printable ASCII characters (%x20-7E)"

  def isValidClientId(id: String): Boolean =
    id.nonEmpty && id.length <= MaxClientIdChars && id.forall(c => c >= '\u0020' && c <= '\u007e')

  private def clientId(value: Option[String]): Either[ApiError, Option[String]] =
    value match
      case Some(id) if !isValidClientId(id) => invalid(ClientIdRule)
      case other                            => Right(other)

  enum Kind:
    case JsonBody, FormBody

  /** Media type of a Content-Type value, case-insensitive, parameters ignored. */
  def kindOf(contentType: Option[String]): Option[Kind] =
    contentType.map(_.takeWhile(_ != ';').trim.toLowerCase) match
      case Some("application/json")                  => Some(Kind.JsonBody)
      case Some("application/x-www-form-urlencoded") => Some(Kind.FormBody)
      case _                                         => None

  def parse(kind: Kind, body: Array[Byte]): Either[ApiError, TokenRequest] =
    kind match
      case Kind.JsonBody => parseJson(body)
      case Kind.FormBody => parseForm(body)

  private def invalid(d: String) = Left(ApiError.InvalidRequest(d))

  private def strictUtf8(bytes: Array[Byte]): Option[String] =
    try
      Some(
        StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString
      )
    catch case _: CharacterCodingException => None

  private def checkLimits(username: String, password: String, client: Option[String]): Either[ApiError, TokenRequest] =
    if username.isEmpty then invalid("username is required")
    else if password.isEmpty then invalid("password is required")
    else if username.codePointCount(0, username.length) > MaxUsernameChars then invalid("username is too long")
    else if username.indexOf('\u0000') >= 0 then invalid("username must not contain NUL") // PostgreSQL text cannot hold it
    else if password.getBytes(StandardCharsets.UTF_8).length > MaxPasswordBytes then invalid("password is too long")
    else Right(Password(username, password, client))

  private enum Grant:
    case PasswordGrant, RefreshGrant

  private def grant(value: String): Either[ApiError, Grant] = value match
    case "password"      => Right(Grant.PasswordGrant)
    case "refresh_token" => Right(Grant.RefreshGrant)
    case _               => Left(ApiError.UnsupportedGrantType)

  /** The members (JSON) or parameters (form) each grant reads; each may be given once. */
  private def fieldsOf(g: Grant): List[String] = g match
    case Grant.PasswordGrant => List("grant_type", "username", "password", "client_id")
    case Grant.RefreshGrant  => List("grant_type", "refresh_token", "client_id")

  /** One JSON object, or `invalid_request`; a member given twice among `fields` is refused too. */
  private def jsonObject(body: Array[Byte]): Either[ApiError, Json.Obj] =
    strictUtf8(body) match
      case None => invalid("body is not valid UTF-8")
      case Some(text) =>
        text.fromJson[Json] match
          case Left(_)              => invalid("body is not valid JSON")
          case Right(obj: Json.Obj) => Right(obj)
          case Right(_)             => invalid("body must be a JSON object")

  private def repeated(obj: Json.Obj, fields: List[String]): Option[String] =
    fields.find(f => obj.fields.count(_._1 == f) > 1)

  private def member(obj: Json.Obj, name: String): Option[Json] = obj.fields.collectFirst { case (`name`, v) => v }

  private def requiredString(obj: Json.Obj, name: String): Either[ApiError, String] = member(obj, name) match
    case Some(Json.Str(s)) if s.nonEmpty => Right(s)
    case Some(Json.Str(_))               => invalid(s"$name must not be empty")
    case Some(_)                         => invalid(s"$name must be a string")
    case None                            => invalid(s"$name is required")

  def parseJson(body: Array[Byte]): Either[ApiError, TokenRequest] =
    jsonObject(body).flatMap { obj =>
      for
        _ <- repeated(obj, List("grant_type")).fold(Right(()))(f => invalid(s"$f must not be repeated"))
        g <- member(obj, "grant_type") match
               case None              => Right(Grant.PasswordGrant)
               case Some(Json.Str(v)) => grant(v)
               case Some(_)           => invalid("grant_type must be a string")
        _ <- repeated(obj, fieldsOf(g)).fold(Right(()))(f => invalid(s"$f must not be repeated"))
        client <- member(obj, "client_id") match
                    case None               => Right(None)
                    case Some(Json.Str(id)) => clientId(Some(id))
                    case Some(_)            => invalid("client_id must be a string")
        request <- g match
                     case Grant.PasswordGrant =>
                       for
                         username <- requiredString(obj, "username")
                         password <- requiredString(obj, "password")
                         request  <- checkLimits(username, password, client)
                       yield request
                     case Grant.RefreshGrant => requiredString(obj, "refresh_token").map(Refresh(_, client))
      yield request
    }

  /** application/x-www-form-urlencoded, parsed by hand so repeated parameters and bad encodings are visible. */
  def parseForm(body: Array[Byte]): Either[ApiError, TokenRequest] =
    formParams(body).flatMap { params =>
      def single(name: String) = singleParam(params, name)
      for
        g        <- single("grant_type").flatMap(grant)
        client   <- params.collect { case ("client_id", v) => v } match
                      case Nil     => Right(None)
                      case List(v) => clientId(Some(v))
                      case _       => invalid("client_id must not be repeated")
        request  <- g match
                      case Grant.PasswordGrant =>
                        for
                          username <- single("username")
                          password <- single("password")
                          request  <- checkLimits(username, password, client)
                        yield request
                      case Grant.RefreshGrant => single("refresh_token").map(Refresh(_, client))
      yield request
    }

  /** The body of `POST /revoke`: `token` required (a non-empty string, given once); everything else ignored. */
  def parseRevoke(kind: Kind, body: Array[Byte]): Either[ApiError, RevokeRequest] =
    kind match
      case Kind.JsonBody =>
        jsonObject(body).flatMap { obj =>
          repeated(obj, List("token")).fold(requiredString(obj, "token"))(f => invalid(s"$f must not be repeated"))
        }.map(RevokeRequest(_))
      case Kind.FormBody => formParams(body).flatMap(singleParam(_, "token")).map(RevokeRequest(_))

  /** A parameter that must be there exactly once and not empty (RFC 6749 §3.2). */
  private def singleParam(params: List[(String, String)], name: String): Either[ApiError, String] =
    params.collect { case (`name`, v) => v } match
      case Nil      => invalid(s"$name is required")
      case List("") => invalid(s"$name must not be empty")
      case List(v)  => Right(v)
      case _        => invalid(s"$name must not be repeated")

  /** The decoded parameters in order; a body that is not valid form encoding is `invalid_request`. */
  private def formParams(body: Array[Byte]): Either[ApiError, List[(String, String)]] =
    // The body itself must be ASCII; bytes >= 0x80 are not valid form encoding.
    if body.exists(_ < 0) then invalid("form body is not valid application/x-www-form-urlencoded")
    else
      val text  = new String(body, StandardCharsets.US_ASCII)
      val pairs = text.split('&').iterator.filter(_.nonEmpty).map { part =>
        part.indexOf('=') match
          case -1 => (part, "")
          case i  => (part.substring(0, i), part.substring(i + 1))
      }.toList
      val decoded = pairs.map { case (k, v) => for dk <- percentDecode(k); dv <- percentDecode(v) yield (dk, dv) }
      if decoded.exists(_.isEmpty) then invalid("form body is not valid application/x-www-form-urlencoded")
      else Right(decoded.flatten)

  /** Percent-decoding with `+` as space; the decoded bytes must be valid UTF-8. */
  private def percentDecode(s: String): Option[String] =
    val out = new java.io.ByteArrayOutputStream(s.length)
    var i   = 0
    var ok  = true
    while ok && i < s.length do
      s.charAt(i) match
        case '+' => out.write(' '); i += 1
        case '%' =>
          val hi = if i + 1 < s.length then Character.digit(s.charAt(i + 1), 16) else -1
          val lo = if i + 2 < s.length then Character.digit(s.charAt(i + 2), 16) else -1
          if hi < 0 || lo < 0 then ok = false
          else
            out.write((hi << 4) | lo); i += 3
        case c => out.write(c); i += 1
    if ok then strictUtf8(out.toByteArray) else None
