package simpleauth

import java.net.InetAddress

import io.netty.util.NetUtil
import zio.http.Request

/**
 * The client address of a request, the key of the per-address login limit (contract §8). The socket's peer, unless
 * `TRUST_PROXY_HEADERS=true` (behind fly.io's proxy): then the first of `Fly-Client-IP`, the last entry of
 * `X-Forwarded-For` (the one the proxy added; earlier entries are the client's to write), the peer. A header value
 * that is not an IP address literal is skipped. Parsed with Netty's `NetUtil`, which never asks DNS; zio-http's
 * `Request.remoteAddress` is the socket's peer and never reads a forwarding header.
 */
object ClientAddress:
  def of(req: Request, trustProxyHeaders: Boolean): Option[String] =
    resolve(
      req.remoteAddress,
      if trustProxyHeaders then all(req, "fly-client-ip") else Nil,
      if trustProxyHeaders then all(req, "x-forwarded-for") else Nil,
      trustProxyHeaders
    )

  /** Every line of a header, in order. */
  private def all(req: Request, name: String): List[String] =
    req.headers.iterator.filter(_.headerName.equalsIgnoreCase(name)).map(_.renderedValue).toList

  /**
   * `flyClientIp` and `forwardedFor` are the header lines in order; several `X-Forwarded-For` lines are one list
   * (RFC 9110 §5.3), so its last entry is the last line's last one.
   */
  def resolve(peer: Option[InetAddress], flyClientIp: List[String], forwardedFor: List[String], trustProxyHeaders: Boolean): Option[String] =
    val fromHeaders =
      if !trustProxyHeaders then None
      else
        flyClientIp.lastOption.flatMap(literal)
          .orElse(forwardedFor.lastOption.map(_.split(",", -1).last).flatMap(literal))
    fromHeaders.orElse(peer.map(_.getHostAddress))

  /** The canonical text of an IP address literal (v4 or v6), or None for anything else. */
  def literal(value: String): Option[String] =
    Option(NetUtil.createInetAddressFromIpAddressString(value.trim)).map(_.getHostAddress)
