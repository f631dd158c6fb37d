package simpleauth

import java.nio.charset.StandardCharsets.UTF_8
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import scala.util.control.NonFatal
import spray.json.*

class TokenRequestSpec extends AnyWordSpec with Matchers {
  private val token = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
  /** What a stack's JSON reader hands over: the body's UTF-8 text parsed, its members in order (here by spray-json). */
  private def members(body: Array[Byte]): Either[RequestError, Seq[(String, JsonMember)]] =
    TokenRequest.utf8(body).flatMap { text =>
      (try Right(JsonParser(text)) catch { case NonFatal(_) => Left(TokenRequest.NotJson) }).flatMap {
        case JsObject(fields) =>
          Right(fields.toSeq.map {
            case (name, JsString(value)) => name -> JsonMember.Str(value)
            case (name, _)               => name -> JsonMember.Other
          })
        case _ => Left(TokenRequest.NotAnObject)
      }
    }
  private def bytes(body: String) = body.getBytes(UTF_8)
  private def json(body: String) = members(bytes(body)).flatMap(TokenRequest.fromJson)
  private def form(body: String) = TokenRequest.fromForm(bytes(body))
  private def revokeJson(body: Array[Byte]) = members(body).flatMap(TokenRequest.revokeFromJson)
  private def code(result: Either[RequestError, ?]): String = result match {
    case Left(RequestError.InvalidRequest(_)) => "invalid_request"
    case Left(RequestError.UnsupportedGrantType) => "unsupported_grant_type"
    case Right(accepted) => fail(s"accepted: $accepted")
  }

  "TokenRequest.fromJson" should {
    "read the password grant, grant_type absent or password" in {
      json("""{"username":"a@b.c","password":"p"}""") shouldBe Right(TokenRequest.Password("a@b.c", "p"))
      json("""{"grant_type":"password","username":"a@b.c","password":"p","client_id":"c","refresh_token":5}""") shouldBe
        Right(TokenRequest.Password("a@b.c", "p", Some("c")))
    }

    "read the refresh grant, username and password ignored whatever their type" in {
      json(s"""{"grant_type":"refresh_token","refresh_token":"$token"}""") shouldBe Right(TokenRequest.Refresh(token))
      json(s"""{"grant_type":"refresh_token","refresh_token":"$token","client_id":"web","username":1,"password":null}""") shouldBe
        Right(TokenRequest.Refresh(token, Some("web")))
      // The shape is the service's to judge (invalid_grant), not the parser's.
      json("""{"grant_type":"refresh_token","refresh_token":"short"}""") shouldBe Right(TokenRequest.Refresh("short"))
    }

    "refuse a refresh grant without a refresh_token string, or with a bad client_id" in {
      for (body <- List("""{"grant_type":"refresh_token"}""", """{"grant_type":"refresh_token","refresh_token":""}""",
             """{"grant_type":"refresh_token","refresh_token":null}""", """{"grant_type":"refresh_token","refresh_token":43}""",
             """{"grant_type":"refresh_token","refresh_token":["x"]}""",
             """{"grant_type":"refresh_token","username":"a@b.c","password":"p"}""",
             s"""{"grant_type":"refresh_token","refresh_token":"$token","client_id":""}""",
             s"""{"grant_type":"refresh_token","refresh_token":"$token","client_id":7}"""))
        withClue(body)(code(json(body)) shouldBe "invalid_request")
    }

    "refuse a grant_type of the wrong type, and name an unknown one unsupported" in {
      for (g <- List("1", "null", "true", "[\"password\"]", "{}"))
        withClue(g)(code(json(s"""{"grant_type":$g,"username":"a","password":"b"}""")) shouldBe "invalid_request")
      for (g <- List("client_credentials", "PASSWORD", "Refresh_Token", ""))
        withClue(g)(code(json(s"""{"grant_type":"$g","username":"a","password":"b"}""")) shouldBe "unsupported_grant_type")
    }
  }

  "TokenRequest.fromForm" should {
    "read both grants, other parameters ignored" in {
      form("grant_type=password&username=a%40b.c&password=p+q&scope=x") shouldBe Right(TokenRequest.Password("a@b.c", "p q"))
      form(s"grant_type=refresh_token&refresh_token=$token&client_id=web&scope=x") shouldBe
        Right(TokenRequest.Refresh(token, Some("web")))
      // username and password are no parameters of the refresh grant: ignored, even twice.
      form(s"grant_type=refresh_token&refresh_token=$token&username=a&username=b") shouldBe Right(TokenRequest.Refresh(token))
    }

    "refuse a refresh grant whose refresh_token is missing, empty or repeated, or whose client_id is repeated" in {
      for (body <- List("grant_type=refresh_token", "grant_type=refresh_token&refresh_token=",
             s"grant_type=refresh_token&refresh_token=$token&refresh_token=$token",
             s"grant_type=refresh_token&refresh_token=$token&client_id=a&client_id=a",
             s"grant_type=refresh_token&grant_type=refresh_token&refresh_token=$token",
             "grant_type=refresh_token&username=a%40b.c&password=p"))
        withClue(body)(code(form(body)) shouldBe "invalid_request")
    }

    "require grant_type, and name an unknown one unsupported" in {
      code(form(s"refresh_token=$token")) shouldBe "invalid_request"
      code(form(s"grant_type=&refresh_token=$token")) shouldBe "invalid_request"
      code(form(s"grant_type=client_credentials&refresh_token=$token")) shouldBe "unsupported_grant_type"
    }
  }

  "the revocation request" should {
    "read token from JSON and from a form, other members and parameters ignored" in {
      revokeJson(bytes(s"""{"token":"$token","token_type_hint":"refresh_token","x":1}""")) shouldBe
        Right(RevokeRequest(token))
      TokenRequest.revokeFromForm(bytes(s"token=$token&token_type_hint=refresh_token&client_id=a&client_id=b")) shouldBe
        Right(RevokeRequest(token))
      TokenRequest.revokeFromForm(bytes("token=any+string%21")) shouldBe Right(RevokeRequest("any string!"))
    }

    "refuse a token that is missing, empty, not a string or given twice in a form" in {
      for (body <- List("{}", """{"token":""}""", """{"token":null}""", """{"token":1}""", """{"token":{}}""", "[]", "not json"))
        withClue(body)(code(revokeJson(bytes(body))) shouldBe "invalid_request")
      for (body <- List("", "token=", "token_type_hint=refresh_token", s"token=$token&token=$token", "token=%ZZ"))
        withClue(body)(code(TokenRequest.revokeFromForm(bytes(body))) shouldBe "invalid_request")
      code(revokeJson(Array(0xff.toByte, 0xfe.toByte))) shouldBe "invalid_request"
    }

    "refuse a member the grant reads given twice, as a JSON library that keeps repeats hands them over" in {
      val twice = Seq("username" -> JsonMember.Str("a"), "password" -> JsonMember.Str("p"), "username" -> JsonMember.Str("b"))
      code(TokenRequest.fromJson(twice)) shouldBe "invalid_request"
      code(TokenRequest.fromJson(Seq("grant_type" -> JsonMember.Str("password"), "grant_type" -> JsonMember.Str("password"),
        "username" -> JsonMember.Str("a"), "password" -> JsonMember.Str("p")))) shouldBe "invalid_request"
      TokenRequest.fromJson(twice.take(2) ++ Seq("scope" -> JsonMember.Other, "scope" -> JsonMember.Other)) shouldBe
        Right(TokenRequest.Password("a", "p"))
    }

    "keep tokens and passwords out of toString" in {
      RevokeRequest(token).toString should not include token
      TokenRequest.Refresh(token).toString should not include token
      TokenRequest.Password("a@b.c", "secret").toString should not include "secret"
    }
  }
}
