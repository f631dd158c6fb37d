package simpleauth

import java.net.{InetAddress, UnknownHostException}

/**
 * The client address that the per-address login limit counts (contract §8), from what the web layer hands over: the
 * socket's peer and the raw lines of two headers.
 *
 * The peer, unless `trustProxyHeaders` (`TRUST_PROXY_HEADERS=true`, behind fly.io's proxy): then the first of
 * `Fly-Client-IP` (its last line), the last entry of `X-Forwarded-For` (the one the proxy added; the entries before
 * it are the client's to choose; several lines are one list, RFC 9110 §5.3) and the peer. A header value that is not
 * an IP address literal is skipped; no name is ever looked up. (akka-http's `extractClientIP` believes
 * `X-Forwarded-For` whatever the deployment; zio-http's `remoteAddress` is the peer: neither is used for this.)
 */
object ClientAddress {
  private val Ipv4 = """(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}""".r

  /** `flyClientIp` and `forwardedFor`: the lines of those headers, in request order. */
  def resolve(
      peer: Option[InetAddress],
      flyClientIp: Seq[String],
      forwardedFor: Seq[String],
      trustProxyHeaders: Boolean
  ): Option[InetAddress] =
    if (!trustProxyHeaders) peer
    else
      flyClientIp.lastOption.flatMap(parseIp)
        .orElse(forwardedFor.lastOption.flatMap(line => parseIp(line.split(",", -1).last)))
        .orElse(peer)

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
