package io.simpleauth.web;

import java.net.InetAddress;
import java.util.Map;

import io.simpleauth.Vectors;
import io.simpleauth.config.TrustedProxies;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.mock.web.MockHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The client address of the per-address limit (spec/README §8): the peer, or from a trusted peer the nearest
 * X-Forwarded-For hop not in TRUSTED_PROXIES.
 */
class ClientAddressTest {

	/** The proxies of the table below: one IPv4 /8, one host, one IPv6 /64. */
	private final ClientAddress address = new ClientAddress(
			Vectors.settings(Map.of("TRUSTED_PROXIES", "10.0.0.0/8, 192.0.2.1 ,2001:db8:f::/64")));

	/**
	 * peer | X-Forwarded-For fields (separated by '|'; '-' = none) | the client. The walk goes from the last entry back.
	 */
	@ParameterizedTest(name = "peer {0}, XFF [{1}] -> {2}")
	@CsvSource(delimiter = ';', value = {
			// An untrusted peer is the client; no header is read.
			"203.0.113.5; 198.51.100.1; 203.0.113.5",
			"203.0.113.5; garbage; 203.0.113.5",
			// A trusted peer: the nearest untrusted hop.
			"10.0.0.7; 198.51.100.1; 198.51.100.1",
			"10.0.0.7; 198.51.100.1, 198.51.100.2; 198.51.100.2",
			"10.0.0.7; 198.51.100.1, 10.1.2.3; 198.51.100.1",
			"10.0.0.7; 198.51.100.1, 192.0.2.1, 10.1.2.3; 198.51.100.1",
			"192.0.2.1; 198.51.100.1; 198.51.100.1",
			"192.0.2.2; 198.51.100.1; 192.0.2.2",
			// Every field of the header, in order, as one list; entries trimmed, empty entries skipped.
			"10.0.0.7; 198.51.100.1|198.51.100.2; 198.51.100.2",
			"10.0.0.7; 198.51.100.1|10.9.9.9; 198.51.100.1",
			"10.0.0.7; 198.51.100.1,,  ,|  , 10.9.9.9 ,; 198.51.100.1",
			// Not an IP literal: the walk stops at the last address reached (a trusted one).
			"10.0.0.7; 198.51.100.1, garbage; 10.0.0.7",
			"10.0.0.7; 198.51.100.1, garbage, 10.2.2.2; 10.2.2.2",
			"10.0.0.7; 198.51.100.1:443; 10.0.0.7",
			"10.0.0.7; [2001:db8::1]; 10.0.0.7",
			"10.0.0.7; fe80::1%eth0; 10.0.0.7",
			"10.0.0.7; example.com; 10.0.0.7",
			"10.0.0.7; 010.0.0.1; 10.0.0.7",
			// All trusted: the farthest; none: the peer.
			"10.0.0.7; 10.1.1.1, 10.2.2.2; 10.1.1.1",
			"10.0.0.7; -; 10.0.0.7",
			"10.0.0.7; ' , '; 10.0.0.7",
			// IPv6, and IPv4-mapped IPv6 normalised to IPv4 (as a dual-stack socket reports IPv4 peers).
			"2001:db8:f::9; 2001:db8:1::1; 2001:db8:1::1",
			"2001:db8:f::9; 2001:db8:1::1, 2001:db8:f:0:1:2:3:4; 2001:db8:1::1",
			"::ffff:10.0.0.7; 198.51.100.1; 198.51.100.1",
			"10.0.0.7; ::ffff:198.51.100.1; 198.51.100.1",
			"10.0.0.7; 198.51.100.1, ::ffff:10.3.3.3; 198.51.100.1",
			"::ffff:203.0.113.5; 198.51.100.1; 203.0.113.5" })
	void theWalk(String peer, String forwardedFor, String client) {
		MockHttpServletRequest request = request(peer);
		if (!forwardedFor.equals("-")) {
			for (String field : forwardedFor.split("\\|", -1)) {
				request.addHeader("X-Forwarded-For", field);
			}
		}
		assertThat(this.address.of(request)).isEqualTo(ip(client));
	}

	@Test
	void flyClientIpAndOtherHeadersAreIgnored() {
		MockHttpServletRequest request = request("10.0.0.7");
		request.addHeader("Fly-Client-IP", "203.0.113.9");
		request.addHeader("X-Real-IP", "203.0.113.10");
		request.addHeader("Forwarded", "for=203.0.113.11");
		assertThat(this.address.of(request)).isEqualTo(ip("10.0.0.7"));
	}

	@Test
	void withNoTrustedProxiesTheHeadersAreNeverRead() {
		ClientAddress none = new ClientAddress(Vectors.settings(Map.of()));
		MockHttpServletRequest request = request("127.0.0.1");
		request.addHeader("X-Forwarded-For", "198.51.100.1");
		assertThat(none.of(request)).isEqualTo(ip("127.0.0.1"));
	}

	@Test
	void aPeersZoneIsDropped() {
		assertThat(new ClientAddress(TrustedProxies.NONE).of(request("fe80::1%eth0"))).isEqualTo(ip("fe80::1"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "not-an-ip", "999.1.1.1" })
	void aPeerThatIsNotAnAddressIsNoClient(String peer) {
		assertThat(new ClientAddress(TrustedProxies.NONE).of(request(peer))).isNull();
	}

	private static MockHttpServletRequest request(String peer) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/token");
		request.setRemoteAddr(peer);
		return request;
	}

	private static InetAddress ip(String literal) {
		return TrustedProxies.literal(literal);
	}

}
