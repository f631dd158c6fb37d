package simpleauth

import akka.http.scaladsl.model.{AttributeKeys, HttpRequest, RemoteAddress}
import akka.http.scaladsl.model.headers.{RawHeader, `X-Forwarded-For`}
import java.net.InetAddress
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

/** What TokenRoutes hands the core's ClientAddress: the peer attribute and X-Forwarded-For, as akka-http models them. */
class RequestAddressSpec extends AnyWordSpec with Matchers {
  private def ip(s: String) = Some(InetAddress.getByName(s))
  private val request = HttpRequest().addAttribute(AttributeKeys.remoteAddress, RemoteAddress(InetAddress.getByName("10.0.0.9")))
  private val proxies = TrustedProxies.parse("10.0.0.0/8").fold(e => fail(e), identity)

  "TokenRoutes.clientAddress" should {
    "read the peer from the request's remote-address attribute, X-Forwarded-For only from a trusted proxy" in {
      TokenRoutes.clientAddress(request, TrustedProxies.None) shouldBe ip("10.0.0.9")
      TokenRoutes.clientAddress(request.addHeader(RawHeader("X-Forwarded-For", "203.0.113.1")), TrustedProxies.None) shouldBe
        ip("10.0.0.9")
      TokenRoutes.clientAddress(request.addHeader(RawHeader("X-Forwarded-For", "203.0.113.1")), proxies) shouldBe ip("203.0.113.1")
      TokenRoutes.clientAddress(request.addHeader(RawHeader("Fly-Client-IP", "203.0.113.1")), proxies) shouldBe ip("10.0.0.9")
      TokenRoutes.clientAddress(HttpRequest(), proxies) shouldBe None
    }

    "walk an X-Forwarded-For header akka-http modelled, and several header fields as one list" in {
      val modelled = `X-Forwarded-For`(RemoteAddress(InetAddress.getByName("1.1.1.1")), RemoteAddress(InetAddress.getByName("198.51.100.4")))
      TokenRoutes.clientAddress(request.addHeader(modelled), proxies) shouldBe ip("198.51.100.4")
      TokenRoutes.clientAddress(request.addHeader(RawHeader("X-Forwarded-For", "1.1.1.1, unknown")), proxies) shouldBe ip("10.0.0.9")
      val twice = request.addHeader(RawHeader("X-Forwarded-For", "198.51.100.7")).addHeader(RawHeader("X-Forwarded-For", "10.0.0.3"))
      TokenRoutes.clientAddress(twice, proxies) shouldBe ip("198.51.100.7")
    }
  }
}
