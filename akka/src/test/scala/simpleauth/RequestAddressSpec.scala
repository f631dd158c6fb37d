package simpleauth

import akka.http.scaladsl.model.{AttributeKeys, HttpRequest, RemoteAddress}
import akka.http.scaladsl.model.headers.{RawHeader, `X-Forwarded-For`}
import java.net.InetAddress
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

/** What TokenRoutes hands the core's ClientAddress: the peer attribute and the proxy headers, as akka-http models them. */
class RequestAddressSpec extends AnyWordSpec with Matchers {
  private def ip(s: String) = Some(InetAddress.getByName(s))
  private val request = HttpRequest().addAttribute(AttributeKeys.remoteAddress, RemoteAddress(InetAddress.getByName("10.0.0.9")))

  "TokenRoutes.clientAddress" should {
    "read the peer from the request's remote-address attribute, headers only when trusted" in {
      TokenRoutes.clientAddress(request, trustProxyHeaders = false) shouldBe ip("10.0.0.9")
      TokenRoutes.clientAddress(request.addHeader(RawHeader("Fly-Client-IP", "203.0.113.1")), trustProxyHeaders = false) shouldBe
        ip("10.0.0.9")
      TokenRoutes.clientAddress(request.addHeader(RawHeader("Fly-Client-IP", "203.0.113.1")), trustProxyHeaders = true) shouldBe
        ip("203.0.113.1")
      TokenRoutes.clientAddress(HttpRequest(), trustProxyHeaders = false) shouldBe None
    }

    "take the last entry of an X-Forwarded-For header akka-http modelled" in {
      val modelled = `X-Forwarded-For`(RemoteAddress(InetAddress.getByName("1.1.1.1")), RemoteAddress(InetAddress.getByName("198.51.100.4")))
      TokenRoutes.clientAddress(request.addHeader(modelled), trustProxyHeaders = true) shouldBe ip("198.51.100.4")
      TokenRoutes.clientAddress(request.addHeader(RawHeader("X-Forwarded-For", "1.1.1.1, unknown")), trustProxyHeaders = true) shouldBe
        ip("10.0.0.9")
    }
  }
}
