package akka.http.impl.settings

import akka.http.scaladsl.model.HttpMethod
import akka.http.scaladsl.settings.ParserSettings

/**
 * Parser settings under which the request parser accepts any method token (RFC 9110 §9.1:
 * `method = token`), not only the standard methods and a fixed list of custom ones.
 *
 * akka-http's public API (`ParserSettings.withCustomMethods(HttpMethod*)`) only registers a fixed list of
 * method names and answers every other one with its own 501 before routing, so `FOO /health` could never
 * get the service's 405. The underlying setting is a function, `customMethods: String => Option[HttpMethod]`,
 * which the public API does not expose; this file lives in akka's package to set it (internal API, the
 * akka-http version is pinned in build.sbt).
 */
object AnyMethodParserSettings {

  def apply(settings: ParserSettings): ParserSettings =
    settings match { // every ParserSettings is a ParserSettingsImpl (its self-type)
      case impl: ParserSettingsImpl => impl.copy(customMethods = anyToken)
    }

  /** Any RFC 9110 token becomes a custom method (request body allowed); anything else stays unparsable. */
  val anyToken: String => Option[HttpMethod] =
    name => if (name.nonEmpty && name.forall(isTchar)) Some(HttpMethod.custom(name)) else None

  private def isTchar(c: Char): Boolean =
    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "!#$%&'*+-.^_`|~".indexOf(c) >= 0
}
