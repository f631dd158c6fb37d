package simpleauth

import java.net.{Inet4Address, Inet6Address, InetAddress, UnknownHostException}

/**
 * One entry of `TRUSTED_PROXIES` (contract §8): an address and a prefix length, no host bits set beyond the prefix.
 */
final case class Cidr(network: InetAddress, prefix: Int) {
  private val bytes = network.getAddress

  /** Whether `address` (normalised, see [[ClientAddress.normalise]]) is in this range; never across families. */
  def contains(address: InetAddress): Boolean = {
    val other = address.getAddress
    other.length == bytes.length && Cidr.samePrefix(bytes, other, prefix)
  }

  override def toString: String = s"${network.getHostAddress}/$prefix"
}

object Cidr {
  /**
   * `addr/len` or a bare address (= /32 or /128), the address an IP address literal ([[ClientAddress.parseIp]]);
   * refused: a bad address, a length that is not a decimal in range, host bits set beyond the prefix.
   */
  def parse(text: String): Either[String, Cidr] = {
    val (addressText, prefixText) = text.indexOf('/') match {
      case -1 => (text, None)
      case i  => (text.substring(0, i), Some(text.substring(i + 1)))
    }
    ClientAddress.parseIp(addressText) match {
      case None => Left(s"'$text' is not an IP address or CIDR")
      case Some(address) =>
        val max = address.getAddress.length * 8
        prefixText match {
          case None => Right(Cidr(address, max))
          case Some(p) =>
            val prefix = if (p.nonEmpty && p.length <= 3 && p.forall(c => c >= '0' && c <= '9')) p.toInt else -1
            if (prefix < 0 || prefix > max) Left(s"'$text' has a prefix length out of range (0-$max)")
            else if (!samePrefix(address.getAddress, address.getAddress, prefix, hostBitsZero = true))
              Left(s"'$text' has host bits set beyond the prefix")
            else Right(Cidr(address, prefix))
        }
    }
  }

  /** Whether `a` and `b` agree on their first `prefix` bits (and, with `hostBitsZero`, `a` has no bit set after them). */
  private def samePrefix(a: Array[Byte], b: Array[Byte], prefix: Int, hostBitsZero: Boolean = false): Boolean = {
    var i = 0
    var ok = true
    while (ok && i < a.length) {
      val bitsHere = math.max(0, math.min(8, prefix - i * 8))
      val mask = (0xff << (8 - bitsHere)) & 0xff
      ok = if (hostBitsZero) (a(i) & ~mask & 0xff) == 0 else (a(i) & mask) == (b(i) & mask)
      i += 1
    }
    ok
  }
}

/** `TRUSTED_PROXIES`: the proxies whose `X-Forwarded-For` entries are believed (contract §8); empty by default. */
final case class TrustedProxies(ranges: List[Cidr]) {
  def contains(address: InetAddress): Boolean = ranges.exists(_.contains(address))
  def isEmpty: Boolean = ranges.isEmpty
  override def toString: String = ranges.mkString(",")
}

object TrustedProxies {
  val None: TrustedProxies = TrustedProxies(Nil)

  /** A comma-separated list of [[Cidr]]s, each trimmed; an empty text is the empty list, an empty entry is refused. */
  def parse(text: String): Either[String, TrustedProxies] =
    if (text.trim.isEmpty) Right(None)
    else
      text.split(",", -1).toList.map(_.trim).foldLeft[Either[String, List[Cidr]]](Right(Nil)) { (acc, entry) =>
        acc.flatMap(list => if (entry.isEmpty) Left("has an empty entry") else Cidr.parse(entry).map(list :+ _))
      }.map(TrustedProxies(_))
}

/**
 * The client address that the per-address login limit counts (contract §8), from what the web layer hands over: the
 * socket's peer and the lines of `X-Forwarded-For`.
 *
 * The peer, unless it is one of `TRUSTED_PROXIES`: then `X-Forwarded-For` is walked from the nearest hop back (its
 * lines joined as one list, RFC 9110 §5.3; entries trimmed, empty ones skipped): an entry that is not an IP address
 * literal stops the walk at the last address reached (a trusted one); the first entry not in TRUSTED_PROXIES is the
 * client; if all are trusted, the farthest one. Addresses are normalised first (an IPv4-mapped IPv6 address is the
 * IPv4 address). `Fly-Client-IP` and every other header are ignored; no name is ever looked up. (akka-http's
 * `extractClientIP` believes `X-Forwarded-For` whatever the deployment; zio-http's `remoteAddress` is the peer:
 * neither is used for this.)
 */
object ClientAddress {
  private val Ipv4 = """(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}""".r

  /** `forwardedFor`: the lines of `X-Forwarded-For`, in request order. */
  def resolve(peer: Option[InetAddress], forwardedFor: Seq[String], trusted: TrustedProxies): Option[InetAddress] =
    peer.map(normalise).map { first =>
      if (trusted.isEmpty || !trusted.contains(first)) first
      else {
        val entries = forwardedFor.iterator.flatMap(_.split(",", -1)).map(_.trim).filter(_.nonEmpty).toVector
        var client = first
        var i = entries.length - 1
        var walking = true
        while (walking && i >= 0) {
          parseIp(entries(i)) match {
            case None => walking = false // not an address: the last one reached (trusted) is the client
            case Some(hop) =>
              client = hop
              if (!trusted.contains(hop)) walking = false
          }
          i -= 1
        }
        client
      }
    }

  /** An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as the IPv4 address; any other address as it is. */
  def normalise(address: InetAddress): InetAddress = address match {
    case v6: Inet6Address =>
      val b = v6.getAddress
      if ((0 until 10).forall(b(_) == 0) && b(10) == -1 && b(11) == -1)
        InetAddress.getByAddress(java.util.Arrays.copyOfRange(b, 12, 16))
      else v6
    case other => other
  }

  /**
   * The key of the per-address limit (contract §8): an IPv4 address as it is, an IPv6 address by its /64 (the first
   * 64 bits; `2001:db8:1:2:0:0:0:0/64`).
   */
  def limitKey(address: InetAddress): String = normalise(address) match {
    case v4: Inet4Address => v4.getHostAddress
    case v6 =>
      val prefix = java.util.Arrays.copyOf(v6.getAddress.take(8), 16)
      InetAddress.getByAddress(prefix).getHostAddress + "/64"
  }

  /**
   * An IPv4 dotted quad (no leading zeros) or an IPv6 literal (no brackets, port or zone), normalised; else None.
   * `InetAddress.getByName` never asks DNS here: the text is either checked to be a dotted quad first, or holds a
   * `:`, which the JDK parses as an IPv6 literal or refuses.
   */
  def parseIp(text: String): Option[InetAddress] = {
    val s = text.trim
    if (s.isEmpty || s.length > 45) None
    else if (Ipv4.matches(s)) Some(InetAddress.getByName(s))
    else if (s.indexOf(':') >= 0 && s.forall(c => Character.digit(c, 16) >= 0 && c < 128 || c == ':' || c == '.'))
      try Some(normalise(InetAddress.getByName(s)))
      catch { case _: UnknownHostException => None }
    else None
  }
}
