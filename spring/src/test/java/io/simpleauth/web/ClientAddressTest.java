package io.simpleauth.web;

import java.net.InetAddress;
import java.util.Map;

import io.simpleauth.Vectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.mock.web.MockHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThat;

/** The client address of the per-address limit (spec/README §8): the peer, or with trusted proxy headers theirs. */
class ClientAddressTest {

	private final ClientAddress untrusted = new ClientAddress(Vectors.settings(Map.of()));

	private final ClientAddress trusted = new ClientAddress(Vectors.settings(Map.of("TRUST_PROXY_HEADERS", "true")));

	@Test
	void untrustedTheHeadersAreIgnored() {
		MockHttpServletRequest request = request("10.0.0.7");
		request.addHeader("Fly-Client-IP", "203.0.113.9");
		request.addHeader("X-Forwarded-For", "198.51.100.1, 198.51.100.2");
		assertThat(this.untrusted.of(request)).isEqualTo(ip("10.0.0.7"));
	}

	@Test
	void trustedFlyClientIpComesFirst() {
		MockHttpServletRequest request = request("10.0.0.7");
		request.addHeader("Fly-Client-IP", "203.0.113.9");
		request.addHeader("X-Forwarded-For", "198.51.100.1, 198.51.100.2");
		assertThat(this.trusted.of(request)).isEqualTo(ip("203.0.113.9"));
	}

	@Test
	void trustedWithoutFlyClientIpTheLastForwardedForEntryCounts() {
		MockHttpServletRequest request = request("10.0.0.7");
		request.addHeader("X-Forwarded-For", "198.51.100.1, 6.6.6.6,198.51.100.2 ");
		assertThat(this.trusted.of(request)).isEqualTo(ip("198.51.100.2"));
		MockHttpServletRequest twoHeaders = request("10.0.0.7");
		twoHeaders.addHeader("X-Forwarded-For", "198.51.100.1");
		twoHeaders.addHeader("X-Forwarded-For", "198.51.100.3");
		assertThat(this.trusted.of(twoHeaders)).as("the last header's last entry").isEqualTo(ip("198.51.100.3"));
	}

	@Test
	void trustedWithoutHeadersThePeerCounts() {
		assertThat(this.trusted.of(request("10.0.0.7"))).isEqualTo(ip("10.0.0.7"));
	}

	@Test
	void garbageIsSkippedNotTrusted() {
		MockHttpServletRequest request = request("10.0.0.7");
		request.addHeader("Fly-Client-IP", "not-an-ip");
		request.addHeader("X-Forwarded-For", "198.51.100.1, evil.example.com");
		assertThat(this.trusted.of(request)).as("the garbage last entry is skipped, not the one before it")
			.isEqualTo(ip("10.0.0.7"));
		MockHttpServletRequest flyGarbage = request("10.0.0.7");
		flyGarbage.addHeader("Fly-Client-IP", "");
		flyGarbage.addHeader("X-Forwarded-For", "2001:db8::5");
		assertThat(this.trusted.of(flyGarbage)).isEqualTo(ip("2001:db8::5"));
	}

	@Test
	void spellingsOfOneAddressAreOneAddress() {
		assertThat(ClientAddress.parse("::ffff:192.0.2.1")).isEqualTo(ClientAddress.parse("192.0.2.1"));
		assertThat(ClientAddress.parse("2001:DB8:0::1")).isEqualTo(ClientAddress.parse("2001:db8::1"));
		assertThat(ClientAddress.parse(" 192.0.2.1 ")).isEqualTo(ClientAddress.parse("192.0.2.1"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "", " ", "localhost", "example.com", "gar:bage", "1.2.3", "1.2.3.4.5", "256.1.1.1",
			"1.2.3.4:80", "[::1]", "[::1]:80", "fe80::1%eth0", "::g", "1:2", "-1.2.3.4", "1.2.3.4 5", "\u0661.2.3.4",
			".1:2::3", "unknown", "_hidden" })
	void whatIsNotAnIpLiteralIsNoAddress(String value) {
		assertThat(ClientAddress.parse(value)).isNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "0.0.0.0", "127.0.0.1", "255.255.255.255", "::1", "::", "2001:db8::1", "::ffff:10.0.0.1",
			"2001:0db8:0000:0000:0000:ff00:0042:8329" })
	void ipLiteralsAreAddresses(String value) {
		assertThat(ClientAddress.parse(value)).isNotNull();
	}

	private static MockHttpServletRequest request(String peer) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/token");
		request.setRemoteAddr(peer);
		return request;
	}

	private static InetAddress ip(String literal) {
		return ClientAddress.parse(literal);
	}

}
