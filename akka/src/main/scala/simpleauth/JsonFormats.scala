package simpleauth

import akka.http.scaladsl.marshallers.sprayjson.SprayJsonSupport
import scala.collection.immutable.ListMap
import spray.json.*

/** JSON shapes of the contract. Member order is kept as the contract writes it. */
object JsonFormats extends SprayJsonSupport with DefaultJsonProtocol {

  given errorWriter: RootJsonWriter[ApiError] = (e: ApiError) =>
    JsObject(ListMap("error" -> JsString(e.error)) ++ e.description.map(d => "error_description" -> JsString(d)))

  given tokenPairWriter: RootJsonWriter[TokenPair] = (t: TokenPair) =>
    JsObject(ListMap(
      "access_token" -> JsString(t.accessToken),
      "id_token"     -> JsString(t.idToken),
      "token_type"   -> JsString("Bearer"),
      "expires_in"   -> JsNumber(t.expiresIn)
    ))

  given jwksWriter: RootJsonWriter[PublicJwk] = (k: PublicJwk) =>
    JsObject("keys" -> JsArray(JsObject(ListMap(
      "kty" -> JsString("RSA"),
      "use" -> JsString("sig"),
      "alg" -> JsString("RS256"),
      "kid" -> JsString(k.kid),
      "n"   -> JsString(k.n),
      "e"   -> JsString(k.e)
    ))))

  final case class HealthStatus(status: String)
  given healthWriter: RootJsonWriter[HealthStatus] = (h: HealthStatus) => JsObject("status" -> JsString(h.status))
}
