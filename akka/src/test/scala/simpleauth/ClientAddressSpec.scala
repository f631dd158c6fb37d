package simpleauth

import akka.http.scaladsl.model.{AttributeKeys, HttpRequest, RemoteAddress}
import akka.http.scaladsl.model.headers.{RawHeader, `X-Forwarded-For`}
import java.net.InetAddress
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class ClientAddressSpec extends AnyWordSpec with Matchers {
  private val peer = Some(InetAddress.getByName("10.0.0.1"))
  private def ip(s: String) = Some(InetAddress.getByName(s))
  private val trusted = new ClientAddress(trustProxyHeaders = true)
  private val untrusted = new ClientAddress(trustProxyHeaders = false)
  private def fly(v: String) = RawHeader("Fly-Client-IP", v)
  private def xff(v: String) = RawHeader("X-Forwarded-For", v)

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
      trusted.resolve(List(`X-Forwarded-For`(RemoteAddress(InetAddress.getByName("1.1.1.1")),
        RemoteAddress(InetAddress.getByName("198.51.100.4")))), peer) shouldBe ip("198.51.100.4") // as akka-http models it
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

    "read the peer from the request's remote-address attribute" in {
      val request = HttpRequest().addAttribute(AttributeKeys.remoteAddress, RemoteAddress(InetAddress.getByName("10.0.0.9")))
      untrusted.of(request) shouldBe ip("10.0.0.9")
      trusted.of(request.addHeader(fly("203.0.113.1"))) shouldBe ip("203.0.113.1")
      untrusted.of(HttpRequest()) shouldBe None
    }
  }
}
