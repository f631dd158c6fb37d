package simpleauth

import java.net.InetAddress
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class ClientAddressSpec extends AnyWordSpec with Matchers {
  private val peer = Some(InetAddress.getByName("10.0.0.1"))
  private def ip(s: String) = Some(InetAddress.getByName(s))
  private enum Header {
    case Fly(value: String)
    case Xff(value: String)
  }
  private def fly(v: String) = Header.Fly(v)
  private def xff(v: String) = Header.Xff(v)

  /** The web layer's part: the lines of the two headers, in request order. */
  private final class Resolver(trust: Boolean) {
    def resolve(headers: List[Header], peer: Option[InetAddress]): Option[InetAddress] =
      ClientAddress.resolve(peer, headers.collect { case Header.Fly(v) => v }, headers.collect { case Header.Xff(v) => v }, trust)
  }
  private val trusted = new Resolver(trust = true)
  private val untrusted = new Resolver(trust = false)

  "ClientAddress" should {
    "be the socket's peer, whatever the headers say, unless proxy headers are trusted" in {
      untrusted.resolve(List(fly("203.0.113.9"), xff("198.51.100.1")), peer) shouldBe peer
      untrusted.resolve(Nil, None) shouldBe None
    }

    "take Fly-Client-IP first when trusted" in {
      trusted.resolve(List(xff("198.51.100.1"), fly("203.0.113.9")), peer) shouldBe ip("203.0.113.9")
      trusted.resolve(List(fly(" 2001:db8::1 ")), peer) shouldBe ip("2001:db8::1")
    }

    "else take the last X-Forwarded-For entry, the one the proxy added" in {
      trusted.resolve(List(xff("1.1.1.1, 198.51.100.1,198.51.100.2")), peer) shouldBe ip("198.51.100.2")
      trusted.resolve(List(xff("1.1.1.1"), xff("198.51.100.3")), peer) shouldBe ip("198.51.100.3") // several headers: one list
    }

    "else the peer" in {
      trusted.resolve(Nil, peer) shouldBe peer
    }

    "skip values that are not IP addresses, never looking a name up" in {
      for (garbage <- List("", "unknown", "localhost", "example.com", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4",
             "1.2.3.4:80", "::g", "1:2:3:4:5:6:7:8:9", "fe80::1%eth0", "[::1]", "\u0661.2.3.4"))
        withClue(garbage) {
          ClientAddress.parseIp(garbage) shouldBe None
          trusted.resolve(List(fly(garbage)), peer) shouldBe peer
          trusted.resolve(List(fly(garbage), xff(s"198.51.100.1, $garbage")), peer) shouldBe peer // not the entry before it
        }
      trusted.resolve(List(fly("nonsense"), xff("198.51.100.5")), peer) shouldBe ip("198.51.100.5")
      ClientAddress.parseIp("::ffff:192.0.2.1") shouldBe ip("192.0.2.1") // an IPv4-mapped address is its IPv4 address
    }
  }
}
