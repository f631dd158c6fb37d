package simpleauth

import java.nio.charset.StandardCharsets.UTF_8

import zio.test.*

object TokenRequestSpec extends ZIOSpecDefault:
  import TokenRequest.*

  def json(s: String) = parseJson(s.getBytes(UTF_8))
  def form(s: String) = parseForm(s.getBytes(UTF_8))
  def invalid(r: Either[ApiError, Any]) = r.left.exists(_.isInstanceOf[ApiError.InvalidRequest])
  def revokeJson(s: String) = parseRevoke(Kind.JsonBody, s.getBytes(UTF_8))
  def revokeForm(s: String) = parseRevoke(Kind.FormBody, s.getBytes(UTF_8))
  val rt = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
  val ok = Right(TokenRequest.Password("john@example.com", "TopSecret0!"))

  def spec = suite("TokenRequest")(
    suite("Content-Type")(
      test("media type matched case-insensitively, parameters allowed") {
        assertTrue(
          kindOf(Some("application/json")).contains(Kind.JsonBody),
          kindOf(Some("Application/JSON; charset=utf-8")).contains(Kind.JsonBody),
          kindOf(Some("application/x-www-form-urlencoded;charset=UTF-8")).contains(Kind.FormBody),
          kindOf(Some("text/plain")).isEmpty,
          kindOf(Some("application/jsonx")).isEmpty,
          kindOf(None).isEmpty
        )
      }
    ),
    suite("JSON")(
      test("valid, with and without grant_type, unknown members ignored") {
        assertTrue(
          json("""{"username":"john@example.com","password":"TopSecret0!"}""") == ok,
          json("""{"grant_type":"password","username":"john@example.com","password":"TopSecret0!","x":1}""") == ok
        )
      },
      test("not an object, not JSON, wrong types, empty or missing fields -> invalid_request") {
        assertTrue(
          invalid(json("""[]""")),
          invalid(json(""""str"""")),
          invalid(json("""null""")),
          invalid(json("""{"username":"a""")),
          invalid(json("""{"username":null,"password":"p"}""")),
          invalid(json("""{"username":1,"password":"p"}""")),
          invalid(json("""{"username":{},"password":"p"}""")),
          invalid(json("""{"username":"","password":"p"}""")),
          invalid(json("""{"username":"u"}""")),
          invalid(json("""{"username":"u","password":"p","grant_type":5}""")),
          invalid(json("""{"username":"john@example.com","password":"p","username":"x@example.com"}"""))
        )
      },
      test("grant_type other than password or refresh_token (the empty string too) -> unsupported_grant_type") {
        assertTrue(
          json("""{"grant_type":"client_credentials","username":"u","password":"p"}""") == Left(ApiError.UnsupportedGrantType),
          json("""{"grant_type":"Password","username":"u","password":"p"}""") == Left(ApiError.UnsupportedGrantType),
          json("""{"grant_type":"refresh-token","refresh_token":"t"}""") == Left(ApiError.UnsupportedGrantType),
          json("""{"grant_type":"","username":"u","password":"p"}""") == Left(ApiError.UnsupportedGrantType)
        )
      },
      test("NUL in username -> invalid_request (JSON escape and form %00)") {
        assertTrue(
          invalid(json("""{"username":"john\u0000@example.com","password":"p"}""")),
          invalid(form("grant_type=password&username=john%00%40example.com&password=p"))
        )
      },
      test("invalid UTF-8 -> invalid_request") {
        val bytes = """{"username":"u","password":"""".getBytes(UTF_8) ++ Array(0xff.toByte, 0xfe.toByte) ++ "\"}".getBytes(UTF_8)
        assertTrue(invalid(parseJson(bytes)))
      },
      test("limits: username 254 code points, password 1024 UTF-8 bytes") {
        val u254 = "é" * 254
        assertTrue(
          json(s"""{"username":"$u254","password":"p"}""").isRight,
          invalid(json(s"""{"username":"${u254}x","password":"p"}""")),
          json(s"""{"username":"u","password":"${"a" * 1024}"}""").isRight,
          invalid(json(s"""{"username":"u","password":"${"é" * 513}"}"""))
        )
      }
    ),
    suite("form")(
      test("valid, extra parameters ignored, percent-decoding and + as space") {
        assertTrue(
          form("grant_type=password&username=john%40example.com&password=TopSecret0%21&scope=x") == ok,
          form("grant_type=password&username=a+b&password=c%20d") == Right(TokenRequest.Password("a b", "c d"))
        )
      },
      test("missing, empty or repeated fields -> invalid_request") {
        assertTrue(
          invalid(form("username=u&password=p")),
          invalid(form("grant_type=password&username=&password=p")),
          invalid(form("grant_type=password&username=u")),
          invalid(form("grant_type=password&username=u&username=v&password=p")),
          invalid(form("grant_type=password&grant_type=password&username=u&password=p")),
          invalid(form("grant_type=password&username=u&password=p&password=p")),
          invalid(form("grant_type=password&username=%ZZ&password=p")),
          invalid(form("grant_type=password&username=%C3&password=p"))
        )
      },
      test("grant_type other than password -> unsupported_grant_type") {
        assertTrue(form("grant_type=client_credentials&username=u&password=p") == Left(ApiError.UnsupportedGrantType))
      }
    ),
    suite("refresh grant")(
      test("JSON: refresh_token required, client_id optional, username/password ignored") {
        assertTrue(
          json(s"""{"grant_type":"refresh_token","refresh_token":"$rt"}""") == Right(TokenRequest.Refresh(rt)),
          json(s"""{"grant_type":"refresh_token","refresh_token":"$rt","client_id":"web"}""") == Right(TokenRequest.Refresh(rt, Some("web"))),
          json(s"""{"grant_type":"refresh_token","refresh_token":"$rt","username":1,"password":null,"x":[]}""") == Right(TokenRequest.Refresh(rt)),
          // the shape is the flow's business (invalid_grant), not the parser's
          json("""{"grant_type":"refresh_token","refresh_token":"not a token"}""") == Right(TokenRequest.Refresh("not a token"))
        )
      },
      test("JSON: refresh_token missing, empty, not a string or repeated; bad client_id -> invalid_request") {
        assertTrue(
          invalid(json("""{"grant_type":"refresh_token"}""")),
          invalid(json("""{"grant_type":"refresh_token","username":"u","password":"p"}""")),
          invalid(json("""{"grant_type":"refresh_token","refresh_token":""}""")),
          invalid(json("""{"grant_type":"refresh_token","refresh_token":null}""")),
          invalid(json("""{"grant_type":"refresh_token","refresh_token":42}""")),
          invalid(json(s"""{"grant_type":"refresh_token","refresh_token":["$rt"]}""")),
          invalid(json(s"""{"grant_type":"refresh_token","refresh_token":"$rt","refresh_token":"$rt"}""")),
          invalid(json(s"""{"grant_type":"refresh_token","refresh_token":"$rt","client_id":""}""")),
          invalid(json(s"""{"grant_type":"refresh_token","refresh_token":"$rt","client_id":7}""")),
          invalid(json(s"""{"grant_type":"refresh_token","grant_type":"refresh_token","refresh_token":"$rt"}"""))
        )
      },
      test("form: grant_type=refresh_token with refresh_token once, client_id optional, other parameters ignored") {
        assertTrue(
          form(s"grant_type=refresh_token&refresh_token=$rt") == Right(TokenRequest.Refresh(rt)),
          form(s"grant_type=refresh_token&refresh_token=$rt&client_id=my+app&scope=openid") == Right(TokenRequest.Refresh(rt, Some("my app"))),
          form(s"grant_type=refresh_token&refresh_token=$rt&username=u&username=v") == Right(TokenRequest.Refresh(rt)),
          form(s"refresh_token=$rt&grant_type=refresh_token") == Right(TokenRequest.Refresh(rt))
        )
      },
      test("form: refresh_token missing, empty or repeated; client_id repeated or bad; grant_type repeated -> invalid_request") {
        assertTrue(
          invalid(form("grant_type=refresh_token")),
          invalid(form("grant_type=refresh_token&username=u&password=p")),
          invalid(form("grant_type=refresh_token&refresh_token=")),
          invalid(form(s"grant_type=refresh_token&refresh_token=$rt&refresh_token=$rt")),
          invalid(form(s"grant_type=refresh_token&refresh_token=$rt&client_id=a&client_id=a")),
          invalid(form(s"grant_type=refresh_token&refresh_token=$rt&client_id=")),
          invalid(form(s"grant_type=refresh_token&grant_type=refresh_token&refresh_token=$rt")),
          invalid(form(s"refresh_token=$rt")),
          form(s"grant_type=refresh&refresh_token=$rt") == Left(ApiError.UnsupportedGrantType)
        )
      }
    ),
    suite("revoke")(
      test("JSON and form: token required; token_type_hint, client_id and unknown members ignored") {
        assertTrue(
          revokeJson(s"""{"token":"$rt"}""") == Right(RevokeRequest(rt)),
          revokeJson("""{"token":"anything at all","token_type_hint":"access_token","client_id":5}""") == Right(RevokeRequest("anything at all")),
          revokeForm(s"token=$rt") == Right(RevokeRequest(rt)),
          revokeForm(s"token=$rt&token_type_hint=refresh_token&client_id=a&client_id=b") == Right(RevokeRequest(rt)),
          revokeForm("token=a+b%2Bc") == Right(RevokeRequest("a b+c"))
        )
      },
      test("token missing, empty, not a string or given twice; not an object; bad encodings -> invalid_request") {
        assertTrue(
          invalid(revokeJson("{}")),
          invalid(revokeJson("""{"token":""}""")),
          invalid(revokeJson("""{"token":null}""")),
          invalid(revokeJson("""{"token":1}""")),
          invalid(revokeJson("""{"token":{"a":1}}""")),
          invalid(revokeJson("""{"token":"a","token":"b"}""")),
          invalid(revokeJson("""["token"]""")),
          invalid(revokeJson("{")),
          invalid(revokeForm("")),
          invalid(revokeForm("token=")),
          invalid(revokeForm("token=a&token=b")),
          invalid(revokeForm("refresh_token=a")),
          invalid(revokeForm("token=%ZZ"))
        )
      }
    ),
    suite("client_id")(
      test("JSON: an optional string of 1-128 printable ASCII characters") {
        def withId(v: String) = json(s"""{"username":"john@example.com","password":"TopSecret0!","client_id":$v}""")
        assertTrue(
          withId("\"web\"") == Right(TokenRequest.Password("john@example.com", "TopSecret0!", Some("web"))),
          withId("\" ~\"") == Right(TokenRequest.Password("john@example.com", "TopSecret0!", Some(" ~"))),
          withId(s"\"${"a" * 128}\"").map(_.clientId.map(_.length)) == Right(Some(128)),
          json("""{"username":"john@example.com","password":"TopSecret0!"}""").map(_.clientId) == Right(None),
          invalid(withId("null")),
          invalid(withId("1")),
          invalid(withId("{}")),
          invalid(withId("[\"web\"]")),
          invalid(withId("\"\"")),
          invalid(withId(s"\"${"a" * 129}\"")),
          invalid(withId("\"tab\\there\"")),
          invalid(withId("\"caf\u00e9\"")),
          invalid(withId("\"del\\u007f\"")),
          invalid(json("""{"username":"john@example.com","password":"TopSecret0!","client_id":"a","client_id":"b"}"""))
        )
      },
      test("form: optional, decoded value under the same rule, given twice -> invalid_request") {
        val base = "grant_type=password&username=john%40example.com&password=TopSecret0%21"
        assertTrue(
          form(s"$base&client_id=my+app%21").map(_.clientId) == Right(Some("my app!")),
          form(base).map(_.clientId) == Right(None),
          invalid(form(s"$base&client_id=")),
          invalid(form(s"$base&client_id=a&client_id=a")),
          invalid(form(s"$base&client_id=${"a" * 129}")),
          invalid(form(s"$base&client_id=caf%C3%A9")),
          invalid(form(s"$base&client_id=tab%09"))
        )
      },
      test("the rule itself (DEFAULT_CLIENT_ID uses it too)") {
        assertTrue(
          isValidClientId("public"), isValidClientId(" "), isValidClientId("~" * 128),
          !isValidClientId(""), !isValidClientId("x" * 129), !isValidClientId("\u007f"), !isValidClientId("\u00e9"), !isValidClientId("\n")
        )
      }
    )
  )
