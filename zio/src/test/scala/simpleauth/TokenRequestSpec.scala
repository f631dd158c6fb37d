package simpleauth

import java.nio.charset.StandardCharsets.UTF_8

import zio.test.*

object TokenRequestSpec extends ZIOSpecDefault:
  import TokenRequest.*

  def json(s: String) = parseJson(s.getBytes(UTF_8))
  def form(s: String) = parseForm(s.getBytes(UTF_8))
  def invalid(r: Either[ApiError, TokenRequest]) = r.left.exists(_.isInstanceOf[ApiError.InvalidRequest])
  val ok = Right(TokenRequest("john@example.com", "TopSecret0!"))

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
      test("grant_type other than password (the empty string too) -> unsupported_grant_type") {
        assertTrue(
          json("""{"grant_type":"client_credentials","username":"u","password":"p"}""") == Left(ApiError.UnsupportedGrantType),
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
          form("grant_type=password&username=a+b&password=c%20d") == Right(TokenRequest("a b", "c d"))
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
    suite("client_id")(
      test("JSON: an optional string of 1-128 printable ASCII characters") {
        def withId(v: String) = json(s"""{"username":"john@example.com","password":"TopSecret0!","client_id":$v}""")
        assertTrue(
          withId("\"web\"") == Right(TokenRequest("john@example.com", "TopSecret0!", Some("web"))),
          withId("\" ~\"") == Right(TokenRequest("john@example.com", "TopSecret0!", Some(" ~"))),
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
