package simpleauth

import akka.http.scaladsl.model.{AttributeKeys, HttpHeader, HttpRequest}
import akka.http.scaladsl.model.headers.`X-Forwarded-For`
import java.net.{InetAddress, UnknownHostException}

/**
 * The client address that the per-address login limit counts (contract §8).
 *
 * The socket's peer (akka-http's `remote-address-attribute`, switched on in `application.conf`), unless
 * `trustProxyHeaders` (`TRUST_PROXY_HEADERS=true`, behind fly.io's proxy): then the first of `Fly-Client-IP`,
 * the last entry of `X-Forwarded-For` (the one the proxy added; the entries before it are the client's to
 * choose) and the peer. A header value that is not an IP address literal is skipped; no name is ever looked up.
 * akka-http's `extractClientIP` is not used: it believes `X-Forwarded-For` whatever the deployment.
 */
final class ClientAddress(trustProxyHeaders: Boolean) {
  import ClientAddress.*

  def of(request: HttpRequest): Option[InetAddress] =
    resolve(request.headers, request.attribute(AttributeKeys.remoteAddress).flatMap(_.toOption))

  def resolve(headers: Seq[HttpHeader], peer: Option[InetAddress]): Option[InetAddress] =
    if (!trustProxyHeaders) peer
    else flyClientIp(headers).orElse(lastForwardedFor(headers)).orElse(peer)
}

object ClientAddress {
  private val Ipv4 = """(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}""".r

  /** The last `Fly-Client-IP` header, if it is an IP address. */
  private def flyClientIp(headers: Seq[HttpHeader]): Option[InetAddress] =
    headers.findLast(_.is("fly-client-ip")).flatMap(h => parseIp(h.value))

  /**
   * The last entry of the `X-Forwarded-For` headers (several headers read as one list), if it is an IP address.
   * akka-http models a header it can parse (its entries are then addresses or `unknown`) and keeps the raw
   * value of one it cannot.
   */
  private def lastForwardedFor(headers: Seq[HttpHeader]): Option[InetAddress] =
    headers.findLast(_.is("x-forwarded-for")).flatMap {
      case modeled: `X-Forwarded-For` => modeled.addresses.lastOption.flatMap(_.toOption)
      case raw                        => parseIp(raw.value.split(",", -1).last)
    }

  /**
   * An IPv4 dotted quad (no leading zeros) or an IPv6 literal, else None. `InetAddress.getByName` never asks
   * DNS here: the text is either checked to be a dotted quad first, or holds a `:`, which the JDK parses as an
   * IPv6 literal or refuses.
   */
  def parseIp(text: String): Option[InetAddress] = {
    val s = text.trim
    if (s.isEmpty || s.length > 45) None
    else if (Ipv4.matches(s)) Some(InetAddress.getByName(s))
    else if (s.indexOf(':') >= 0 && s.forall(c => Character.digit(c, 16) >= 0 && c < 128 || c == ':' || c == '.'))
      try Some(InetAddress.getByName(s))
      catch { case _: UnknownHostException => None }
    else None
  }
}
