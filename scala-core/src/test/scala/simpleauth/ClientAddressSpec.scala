package simpleauth

import java.net.{Inet4Address, InetAddress}
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class ClientAddressSpec extends AnyWordSpec with Matchers {
  private def ip(s: String) = InetAddress.getByName(s)
  private def proxies(text: String) = TrustedProxies.parse(text).fold(e => fail(e), identity)

  "Cidr and TrustedProxies" should {
    "parse addresses and CIDRs, a bare address being /32 or /128" in {
      val cases = List(
        "10.0.0.0/8"        -> "10.0.0.0/8",
        "10.0.0.7"          -> "10.0.0.7/32",
        "0.0.0.0/0"         -> "0.0.0.0/0",
        "172.16.0.0/12"     -> "172.16.0.0/12",
        "fdaa::/16"         -> "fdaa:0:0:0:0:0:0:0/16",
        "::1"               -> "0:0:0:0:0:0:0:1/128",
        "::/0"              -> "0:0:0:0:0:0:0:0/0",
        "2001:db8::/32"     -> "2001:db8:0:0:0:0:0:0/32",
        "::ffff:10.0.0.1"   -> "10.0.0.1/32" // an IPv4-mapped address is its IPv4 address
      )
      for ((text, parsed) <- cases) withClue(text)(Cidr.parse(text).map(_.toString) shouldBe Right(parsed))
    }

    "refuse bad addresses, prefix lengths out of range and host bits set beyond the prefix" in {
      for (bad <- List("", "10.0.0.1/8", "10.0.0.0/33", "fdaa::1/16", "::/129", "10.0.0.0/", "/8", "10.0.0.0/-1", "10.0.0.0/x",
             "10.0.0.0/8/8", "example.com", "10.0.0.256", "01.0.0.0/8", "[::1]", "fe80::1%eth0", "10.0.0.0/ 8", "10.0.0.0/1000"))
        withClue(bad)(Cidr.parse(bad).isLeft shouldBe true)
      Cidr.parse("10.0.0.1/8") shouldBe Left("'10.0.0.1/8' has host bits set beyond the prefix")
    }

    "take a comma-separated list, trimming entries, refusing an empty one; empty text is no proxy" in {
      proxies("").isEmpty shouldBe true
      proxies(" ").isEmpty shouldBe true
      proxies(" 10.0.0.0/8 ,fdaa::/16").ranges.map(_.toString) shouldBe List("10.0.0.0/8", "fdaa:0:0:0:0:0:0:0/16")
      for (bad <- List("a,,b", "10.0.0.0/8,", ",10.0.0.0/8", "10.0.0.0/8, ,::1"))
        withClue(bad)(TrustedProxies.parse(bad).isLeft shouldBe true)
    }

    "hold the addresses in their ranges, never across families" in {
      val cases = List(
        ("10.0.0.0/8", "10.255.255.255", true),
        ("10.0.0.0/8", "11.0.0.0", false),
        ("172.16.0.0/12", "172.31.0.1", true),
        ("172.16.0.0/12", "172.32.0.1", false),
        ("10.0.0.7", "10.0.0.7", true),
        ("10.0.0.7", "10.0.0.8", false),
        ("0.0.0.0/0", "203.0.113.1", true),
        ("0.0.0.0/0", "2001:db8::1", false),
        ("::/0", "10.0.0.1", false),
        ("fdaa::/16", "fdaa:0:1::2", true),
        ("fdaa::/16", "fdab::2", false),
        ("10.0.0.0/31", "10.0.0.1", true),
        ("10.0.0.0/31", "10.0.0.2", false),
        ("2001:db8::/33", "2001:db8:7fff::1", true),
        ("2001:db8::/33", "2001:db8:8000::1", false)
      )
      for ((range, address, in) <- cases) withClue(s"$address in $range")(proxies(range).contains(ip(address)) shouldBe in)
    }
  }

  "ClientAddress" should {
    val peer = ip("10.0.0.1")
    val trusted = proxies("10.0.0.0/8, 2001:db8::/32")
    def resolve(peer: InetAddress, xff: List[String], proxies: TrustedProxies = trusted) =
      ClientAddress.resolve(Some(peer), xff, proxies).map(_.getHostAddress).orNull

    "walk X-Forwarded-For from the nearest hop back through trusted proxies (table)" in {
      val cases: List[(String, InetAddress, List[String], String)] = List(
        ("an untrusted peer is the client, no header read", ip("203.0.113.5"), List("198.51.100.1"), "203.0.113.5"),
        ("a trusted peer without the header", peer, Nil, "10.0.0.1"),
        ("a trusted peer: the last entry not trusted", peer, List("198.51.100.1, 203.0.113.9"), "203.0.113.9"),
        ("trusted hops are skipped", peer, List("198.51.100.1, 203.0.113.9, 10.1.2.3, 10.9.9.9"), "203.0.113.9"),
        ("the entries before the client are the client's to choose", peer, List("10.0.0.5, 192.0.2.1, 203.0.113.9"), "203.0.113.9"),
        ("every entry trusted: the farthest", peer, List("10.0.0.3, 10.0.0.2"), "10.0.0.3"),
        ("several header fields are one list, in order", peer, List("198.51.100.1", "203.0.113.9, 10.0.0.2"), "203.0.113.9"),
        ("entries trimmed, empty ones skipped", peer, List(" 198.51.100.1 ,, 203.0.113.9 , ", ""), "203.0.113.9"),
        ("not an address: the last address reached", peer, List("198.51.100.1, unknown, 10.0.0.2"), "10.0.0.2"),
        ("not an address at once: the peer", peer, List("198.51.100.1, unknown"), "10.0.0.1"),
        ("a port is not an address literal", peer, List("198.51.100.1, 203.0.113.9:443"), "10.0.0.1"),
        ("brackets are not an address literal", peer, List("[2001:db8::1]"), "10.0.0.1"),
        ("a zone is not an address literal", peer, List("fe80::1%eth0"), "10.0.0.1"),
        ("IPv6 entries", peer, List("2001:db9::1, 2001:db8::7"), "2001:db9:0:0:0:0:0:1"),
        ("an IPv4-mapped entry is its IPv4 address", peer, List("::ffff:203.0.113.9"), "203.0.113.9"),
        ("an IPv4-mapped trusted entry is trusted", peer, List("203.0.113.9, ::ffff:10.0.0.9"), "203.0.113.9"),
        ("an IPv4-mapped peer is its IPv4 address", ip("::ffff:10.0.0.1"), List("203.0.113.9"), "203.0.113.9"),
        ("an IPv4-mapped untrusted peer", InetAddress.getByAddress(Array.fill[Byte](10)(0) ++ Array[Byte](-1, -1, (203).toByte, 0, 113, 5)),
          List("198.51.100.1"), "203.0.113.5")
      )
      for ((what, p, xff, client) <- cases) withClue(what)(resolve(p, xff) shouldBe client)
    }

    "read no header without trusted proxies" in {
      resolve(peer, List("203.0.113.9"), TrustedProxies.None) shouldBe "10.0.0.1"
      ClientAddress.resolve(None, List("203.0.113.9"), trusted) shouldBe None
    }

    "take IP address literals only, never looking a name up" in {
      for (garbage <- List("", "unknown", "localhost", "example.com", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4",
             "1.2.3.4:80", "::g", "1:2:3:4:5:6:7:8:9", "fe80::1%eth0", "[::1]", "\u0661.2.3.4", "_hidden"))
        withClue(garbage)(ClientAddress.parseIp(garbage) shouldBe None)
      ClientAddress.parseIp(" 2001:db8::1 ") shouldBe Some(ip("2001:db8::1"))
      ClientAddress.parseIp("::ffff:192.0.2.1").get shouldBe a[Inet4Address]
    }

    "key an IPv4 address as it is and an IPv6 address by its /64" in {
      ClientAddress.limitKey(ip("203.0.113.9")) shouldBe "203.0.113.9"
      ClientAddress.limitKey(ip("2001:db8:1:2:3:4:5:6")) shouldBe "2001:db8:1:2:0:0:0:0/64"
      ClientAddress.limitKey(ip("2001:db8:1:2:ffff::1")) shouldBe ClientAddress.limitKey(ip("2001:db8:1:2::9"))
      ClientAddress.limitKey(ip("2001:db8:1:3::1")) should not be ClientAddress.limitKey(ip("2001:db8:1:2::1"))
      ClientAddress.limitKey(InetAddress.getByAddress(Array.fill[Byte](10)(0) ++ Array[Byte](-1, -1, 192.toByte, 0, 2, 1))) shouldBe
        "192.0.2.1"
    }
  }
}
