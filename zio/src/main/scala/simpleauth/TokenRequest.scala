package simpleauth

import java.nio.ByteBuffer
import java.nio.charset.{CharacterCodingException, CodingErrorAction, StandardCharsets}

import zio.json.*
import zio.json.ast.Json

/**
 * A syntactically valid password-grant request: the parsed body of `POST /token`. `clientId` is the request's
 * `client_id` (RFC 6749 §2.2), if it names one; the access token then carries it (RFC 9068 §2.2).
 */
final case class TokenRequest(username: String, password: String, clientId: Option[String] = None)

/** Body parsing and validation for POST /token (spec/README.md "JSON body", "Form body", "Limits"). */
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

  private def checkLimits(username: String, password: String): Either[ApiError, TokenRequest] =
    if username.isEmpty then invalid("username is required")
    else if password.isEmpty then invalid("password is required")
    else if username.codePointCount(0, username.length) > MaxUsernameChars then invalid("username is too long")
    else if username.indexOf('\u0000') >= 0 then invalid("username must not contain NUL") // PostgreSQL text cannot hold it
    else if password.getBytes(StandardCharsets.UTF_8).length > MaxPasswordBytes then invalid("password is too long")
    else Right(TokenRequest(username, password))

  private val Fields = List("username", "password", "grant_type", "client_id")

  def parseJson(body: Array[Byte]): Either[ApiError, TokenRequest] =
    strictUtf8(body) match
      case None => invalid("body is not valid UTF-8")
      case Some(text) =>
        text.fromJson[Json] match
          case Left(_) => invalid("body is not valid JSON")
          case Right(obj: Json.Obj) if Fields.exists(f => obj.fields.count(_._1 == f) > 1) =>
            invalid("username, password, grant_type and client_id must not be repeated")
          case Right(obj: Json.Obj) =>
            def field(name: String): Option[Json] = obj.fields.collectFirst { case (`name`, v) => v }
            def requiredString(name: String): Either[ApiError, String] = field(name) match
              case Some(Json.Str(s)) if s.nonEmpty => Right(s)
              case Some(Json.Str(_))               => invalid(s"$name must not be empty")
              case Some(_)                         => invalid(s"$name must be a string")
              case None                            => invalid(s"$name is required")
            for
              _ <- field("grant_type") match
                     case None | Some(Json.Str("password")) => Right(())
                     case Some(Json.Str(_))                 => Left(ApiError.UnsupportedGrantType)
                     case Some(_)                           => invalid("grant_type must be a string")
              username <- requiredString("username")
              password <- requiredString("password")
              client   <- field("client_id") match
                            case None              => Right(None)
                            case Some(Json.Str(id)) => clientId(Some(id))
                            case Some(_)           => invalid("client_id must be a string")
              request  <- checkLimits(username, password)
            yield request.copy(clientId = client)
          case Right(_) => invalid("body must be a JSON object")

  /** application/x-www-form-urlencoded, parsed by hand so repeated parameters and bad encodings are visible. */
  def parseForm(body: Array[Byte]): Either[ApiError, TokenRequest] =
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
      else
        val params = decoded.flatten
        def single(name: String): Either[ApiError, String] =
          params.collect { case (`name`, v) => v } match
            case Nil          => invalid(s"$name is required")
            case List("")     => invalid(s"$name must not be empty")
            case List(v)      => Right(v)
            case _            => invalid(s"$name must not be repeated")
        for
          grantType <- single("grant_type")
          _         <- if grantType == "password" then Right(()) else Left(ApiError.UnsupportedGrantType)
          username  <- single("username")
          password  <- single("password")
          client    <- params.collect { case ("client_id", v) => v } match
                         case Nil     => Right(None)
                         case List(v) => clientId(Some(v))
                         case _       => invalid("client_id must not be repeated")
          request   <- checkLimits(username, password)
        yield request.copy(clientId = client)

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
