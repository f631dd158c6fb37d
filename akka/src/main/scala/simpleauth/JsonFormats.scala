package simpleauth

import akka.http.scaladsl.marshalling.{Marshaller, ToEntityMarshaller}
import akka.http.scaladsl.model.{ContentTypes, HttpEntity}
import com.nimbusds.jose.jwk.JWKSet
import scala.collection.immutable.ListMap
import scala.jdk.CollectionConverters.*
import spray.json.*

/** The contract's response bodies, each member named as on the wire and in the contract's order. */
final case class TokenResponse(access_token: String, id_token: String, token_type: String, expires_in: Long)
final case class ErrorBody(error: String, error_description: Option[String])
final case class HealthStatus(status: String)
final case class Jwk(kty: String, use: String, alg: String, kid: String, n: String, e: String)
final case class JwkSet(keys: List[Jwk])

object TokenResponse {
  def from(pair: TokenPair): TokenResponse = TokenResponse(pair.accessToken, pair.idToken, "Bearer", pair.expiresIn)
}

object ErrorBody {
  def from(error: ApiError): ErrorBody = ErrorBody(error.error, error.description)
}

object JwkSet {
  def from(keys: JWKSet): JwkSet =
    JwkSet(keys.getKeys.asScala.toList.map { key =>
      val rsa = key.toRSAKey
      Jwk(rsa.getKeyType.getValue, rsa.getKeyUse.identifier, rsa.getAlgorithm.getName, rsa.getKeyID,
        rsa.getModulus.toString, rsa.getPublicExponent.toString)
    })
}

/** spray-json formats of the bodies, and the marshaller that `complete(body)` uses. */
object JsonFormats extends DefaultJsonProtocol {

  given RootJsonFormat[TokenResponse] = inDeclaredOrder(jsonFormat4(TokenResponse.apply))
  given RootJsonFormat[ErrorBody] = inDeclaredOrder(jsonFormat2(ErrorBody.apply))
  given RootJsonFormat[HealthStatus] = jsonFormat1(HealthStatus.apply)
  given RootJsonFormat[Jwk] = inDeclaredOrder(jsonFormat6(Jwk.apply))
  given RootJsonFormat[JwkSet] = jsonFormat1(JwkSet.apply)

  /**
   * spray-json's product formats collect the members in a `TreeMap`, so they come out sorted by name; the
   * contract writes the token response and the JWK in another order (`access_token, id_token, token_type,
   * expires_in`; `kty, use, alg, kid, n, e`). This writes the same members in the case class's order.
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
}
