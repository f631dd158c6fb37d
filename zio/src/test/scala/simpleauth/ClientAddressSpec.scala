package simpleauth

import java.net.InetAddress

import zio.*
import zio.http.*
import zio.test.*

/** The client address: the socket's peer, or behind a trusted proxy Fly-Client-IP / the last X-Forwarded-For entry. */
object ClientAddressSpec extends ZIOSpecDefault:
  private val peer = Some(InetAddress.getByName("10.0.0.9"))

  private def resolve(fly: List[String], xff: List[String], trust: Boolean = true, from: Option[InetAddress] = peer) =
    ClientAddress.resolve(from, fly, xff, trust)

  def spec = suite("ClientAddress")(
    test("not trusted (the default): always the peer, whatever the headers say") {
      assertTrue(
        resolve(List("203.0.113.5"), List("198.51.100.1"), trust = false) == Some("10.0.0.9"),
        resolve(Nil, Nil, trust = false) == Some("10.0.0.9"),
        resolve(List("203.0.113.5"), Nil, trust = false, from = None) == None
      )
    },
    test("trusted: Fly-Client-IP first, then the last X-Forwarded-For entry, then the peer") {
      assertTrue(
        resolve(List("203.0.113.5"), List("198.51.100.1")) == Some("203.0.113.5"),
        resolve(Nil, List("198.51.100.1")) == Some("198.51.100.1"),
        resolve(Nil, List("1.1.1.1, 2.2.2.2, 198.51.100.7")) == Some("198.51.100.7"),
        resolve(Nil, List("1.1.1.1", "2.2.2.2,198.51.100.8")) == Some("198.51.100.8"),
        resolve(Nil, Nil) == Some("10.0.0.9"),
        resolve(List(" 2001:db8::1 "), Nil) == Some("2001:db8:0:0:0:0:0:1"),
        resolve(Nil, List("2001:DB8::2")) == Some("2001:db8:0:0:0:0:0:2")
      )
    },
    test("trusted: a value that is not an IP address is skipped (never a DNS name, never an earlier entry)") {
      assertTrue(
        resolve(List("unknown"), List("198.51.100.1")) == Some("198.51.100.1"),
        resolve(List("localhost"), Nil) == Some("10.0.0.9"),
        resolve(List("203.0.113.5:443"), Nil) == Some("10.0.0.9"),
        resolve(Nil, List("198.51.100.1, garbage")) == Some("10.0.0.9"),
        resolve(Nil, List("198.51.100.1,")) == Some("10.0.0.9"),
        resolve(Nil, List("")) == Some("10.0.0.9"),
        resolve(List("999.1.1.1"), List("example.com")) == Some("10.0.0.9"),
        resolve(List("1.2.3.4, 5.6.7.8"), Nil) == Some("10.0.0.9")
      )
    },
    test("from a zio-http request: headers by any case, the peer from the socket") {
      val req = Request.post(URL(Path.root / "token"), Body.empty)
        .copy(remoteAddress = peer)
        .addHeader("X-Forwarded-For", "1.1.1.1")
        .addHeader("x-forwarded-for", "198.51.100.3")
        .addHeader("FLY-CLIENT-IP", "bogus")
      assertTrue(
        ClientAddress.of(req, trustProxyHeaders = true) == Some("198.51.100.3"),
        ClientAddress.of(req, trustProxyHeaders = false) == Some("10.0.0.9"),
        ClientAddress.of(req.addHeader("Fly-Client-IP", "203.0.113.9"), trustProxyHeaders = true) == Some("203.0.113.9")
      )
    }
  )
