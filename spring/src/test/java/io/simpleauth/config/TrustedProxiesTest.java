package io.simpleauth.config;

import java.net.InetAddress;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** TRUSTED_PROXIES: CIDR ranges and bare addresses, what they contain, what is refused; the address literals. */
class TrustedProxiesTest {

	/** list ; address ; whether the list contains it. */
	@ParameterizedTest(name = "[{0}] contains {1}: {2}")
	@CsvSource(delimiter = ';', value = { "10.0.0.0/8; 10.255.1.2; true", "10.0.0.0/8; 11.0.0.1; false",
			"10.0.0.0/8; ::ffff:10.1.1.1; true", "192.0.2.1; 192.0.2.1; true", "192.0.2.1; 192.0.2.2; false",
			"192.0.2.1/32; 192.0.2.1; true", "0.0.0.0/0; 203.0.113.9; true", "0.0.0.0/0; 2001:db8::1; false",
			"::/0; 2001:db8::1; true", "::/0; 10.0.0.1; false", "2001:db8::/32; 2001:db8:ffff::1; true",
			"2001:db8::/32; 2001:db9::1; false", "::1; ::1; true", "::1/128; 0:0:0:0:0:0:0:1; true",
			"fdaa::/16 , 172.16.0.0/12; 172.31.255.255; true", "fdaa::/16 , 172.16.0.0/12; fdaa:0:1::3; true",
			"fdaa::/16 , 172.16.0.0/12; 172.32.0.0; false", "::ffff:10.0.0.0/104; 10.9.9.9; true",
			"::ffff:192.0.2.1; 192.0.2.1; true", "10.0.0.0/8; 2001:db8::1; false", "' '; 10.0.0.1; false" })
	void contains(String list, String address, boolean contained) {
		assertThat(TrustedProxies.parse(list).contains(TrustedProxies.literal(address))).isEqualTo(contained);
	}

	@ParameterizedTest
	@ValueSource(strings = { "a,,b", "10.0.0.1,", " , ", "10.0.0.1/8", "10.0.0.0/6", "300.1.1.1", "::1/129", "x",
			"10.0.0.0/33", "10.0.0.0/", "/8", "10.0.0.0/8/8", "1.2.3", "1.2.3.4.5", "::ffff:10.0.0.0/95",
			"2001:db8::/31x", "2001:db8::1/127" })
	void refused(String list) {
		assertThatThrownBy(() -> TrustedProxies.parse(list)).isInstanceOf(SettingsException.class)
			.hasMessageStartingWith("TRUSTED_PROXIES must be");
	}

	/** text ; the address, or "-" for not a literal. */
	@ParameterizedTest(name = "{0} -> {1}")
	@CsvSource(delimiter = ';', value = { "192.0.2.1; 192.0.2.1", " 192.0.2.1 ; 192.0.2.1", "0.0.0.0; 0.0.0.0",
			"255.255.255.255; 255.255.255.255", "2001:DB8::1; 2001:db8::1", "::ffff:192.0.2.1; 192.0.2.1",
			"::FFFF:c000:0201; 192.0.2.1", "::; ::", "256.0.0.1; -", "01.2.3.4; -", "1.2.3; -", "1.2.3.4.; -",
			"[::1]; -", "::1%1; -", "1.2.3.4:80; -", "localhost; -", "example.com; -", ".:1; -", "::g; -", "1::2::3; -",
			"'';-" })
	void literal(String text, String expected) throws Exception {
		InetAddress address = TrustedProxies.literal(text);
		if (expected.equals("-")) {
			assertThat(address).isNull();
		}
		else {
			assertThat(address).isEqualTo(InetAddress.getByName(expected));
		}
	}

}
