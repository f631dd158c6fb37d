package simpleauth

import akka.http.scaladsl.marshalling.{Marshaller, ToEntityMarshaller}
import akka.http.scaladsl.model.{ContentTypes, HttpEntity}
import akka.util.ByteString
import com.nimbusds.jose.jwk.{ECKey, JWK, OctetKeyPair, RSAKey}
import scala.collection.immutable.ListMap
import scala.util.control.NonFatal
import spray.json.*

/** The contract's response bodies, each member named as on the wire and in the contract's order. */
final case class TokenResponse(access_token: String, id_token: String, token_type: String, expires_in: Long, refresh_token: String) {
  override def toString: String = s"TokenResponse($token_type, $expires_in)" // never a token
}
final case class ErrorBody(error: String, error_description: Option[String])
final case class HealthStatus(status: String)
/** A public JWK: `kty, use, alg, kid`, then the members of its type (`n, e`; `crv, x, y`; `crv, x`). */
final case class Jwk(
    kty: String,
    use: String,
    alg: String,
    kid: String,
    n: Option[String] = None,
    e: Option[String] = None,
    crv: Option[String] = None,
    x: Option[String] = None,
    y: Option[String] = None
)
final case class JwkSet(keys: List[Jwk])

/** OpenID Connect Discovery 1.0 §3 metadata (contract §3), exactly the contract's members. */
final case class OpenIdConfiguration(
    issuer: String,
    token_endpoint: String,
    jwks_uri: String,
    grant_types_supported: List[String],
    revocation_endpoint: String,
    revocation_endpoint_auth_methods_supported: List[String],
    response_types_supported: List[String],
    subject_types_supported: List[String],
    id_token_signing_alg_values_supported: List[String],
    token_endpoint_auth_methods_supported: List[String],
    claims_supported: List[String]
)

object OpenIdConfiguration {
  val Claims: List[String] =
    List("iss", "aud", "sub", "iat", "exp", "sid", "jti", "client_id", "name", "preferred_username", "email", "at_hash")

  /** The URLs join the issuer, one trailing `/` removed, and the path; `issuer` stays verbatim. */
  def from(issuer: String, algorithm: KeyAlgorithm): OpenIdConfiguration = {
    val base = issuer.stripSuffix("/")
    OpenIdConfiguration(
      issuer = issuer,
      token_endpoint = s"$base/token",
      jwks_uri = s"$base/.well-known/jwks.json",
      grant_types_supported = List("password", "refresh_token"),
      revocation_endpoint = s"$base/revoke",
      revocation_endpoint_auth_methods_supported = List("none"), // whoever holds a refresh token may end its session
      response_types_supported = Nil, // no authorization endpoint; the member is required, so present and empty
      subject_types_supported = List("public"),
      id_token_signing_alg_values_supported = List(algorithm.name),
      token_endpoint_auth_methods_supported = List("none"),
      claims_supported = Claims
    )
  }
}

object TokenResponse {
  def from(issued: IssuedTokens): TokenResponse =
    TokenResponse(issued.tokens.accessToken, issued.tokens.idToken, "Bearer", issued.tokens.expiresIn, issued.refreshToken)
}

object ErrorBody {
  def from(error: ApiError): ErrorBody = ErrorBody(error.error, error.description)
}

object JwkSet {
  def from(keys: List[JWK]): JwkSet = JwkSet(keys.map(Jwk.from))
}

object Jwk {
  /** The public members of a Nimbus JWK, copied (Nimbus prints them in a `HashMap`'s order, see README "JSON"). */
  def from(key: JWK): Jwk = {
    val base = Jwk(key.getKeyType.getValue, key.getKeyUse.identifier, key.getAlgorithm.getName, key.getKeyID)
    key match {
      case rsa: RSAKey => base.copy(n = Some(rsa.getModulus.toString), e = Some(rsa.getPublicExponent.toString))
      case ec: ECKey   => base.copy(crv = Some(ec.getCurve.getName), x = Some(ec.getX.toString), y = Some(ec.getY.toString))
      case okp: OctetKeyPair => base.copy(crv = Some(okp.getCurve.getName), x = Some(okp.getX.toString))
      case other => throw new IllegalArgumentException(s"unexpected key type ${other.getKeyType}")
    }
  }
}

/** spray-json formats of the bodies, and the marshaller that `complete(body)` uses. */
object JsonFormats extends DefaultJsonProtocol {

  given RootJsonFormat[TokenResponse] = inDeclaredOrder(jsonFormat5(TokenResponse.apply))
  given RootJsonFormat[ErrorBody] = inDeclaredOrder(jsonFormat2(ErrorBody.apply))
  given RootJsonFormat[HealthStatus] = jsonFormat1(HealthStatus.apply)
  given RootJsonFormat[Jwk] = inDeclaredOrder(jsonFormat9(Jwk.apply)) // a None member is left out
  given RootJsonFormat[JwkSet] = jsonFormat1(JwkSet.apply)
  given RootJsonFormat[OpenIdConfiguration] = inDeclaredOrder(jsonFormat11(OpenIdConfiguration.apply))

  /**
   * spray-json's product formats collect the members in a `TreeMap`, so they come out sorted by name; the
   * contract writes the token response and the JWK in another order (`access_token, id_token, token_type,
   * expires_in, refresh_token`; `kty, use, alg, kid, n, e`). This writes the same members in the case class's order.
   */
  private def inDeclaredOrder[T <: Product](format: RootJsonFormat[T]): RootJsonFormat[T] =
    new RootJsonFormat[T] {
      def write(value: T): JsValue = {
        val members = format.write(value).asJsObject.fields
        JsObject(ListMap.from(value.productElementNames.flatMap(name => members.get(name).map(name -> _))))
      }
      def read(json: JsValue): T = format.read(json)
    }

  /** `value` as an `application/json` entity, printed compactly. */
  def entity[T](value: T)(using writer: RootJsonWriter[T]): HttpEntity.Strict =
    HttpEntity(ContentTypes.`application/json`, CompactPrinter(writer.write(value)))

  /**
   * `complete(body)` for the bodies above. Opaque, unlike SprayJsonSupport's marshaller, which takes part in
   * content negotiation: with it a request whose `Accept` leaves out application/json is rejected
   * (`UnacceptedResponseContentTypeRejection`) instead of answered, where the contract answers JSON whatever
   * the client accepts.
   */
  given jsonMarshaller[T](using RootJsonWriter[T]): ToEntityMarshaller[T] = Marshaller.opaque(entity(_))

  /**
   * The members of a request body's JSON object, as the core's [[TokenRequest]] reads them: the body must be UTF-8
   * and one JSON object. (spray-json keeps the last of a repeated member.)
   */
  def requestMembers(body: ByteString): Either[RequestError, Seq[(String, JsonMember)]] =
    TokenRequest.utf8(body.toArrayUnsafe()).flatMap { text =>
      (try Right(JsonParser(text))
       catch { case NonFatal(_) => Left(TokenRequest.NotJson) }).flatMap {
        case JsObject(fields) =>
          Right(fields.toSeq.map {
            case (name, JsString(value)) => name -> JsonMember.Str(value)
            case (name, _)               => name -> JsonMember.Other
          })
        case _ => Left(TokenRequest.NotAnObject)
      }
    }
}
