package io.simpleauth.config;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code TRUSTED_PROXIES} (spec/README §5, §8): the proxies whose {@code X-Forwarded-For} is believed, as a list of
 * CIDR ranges. Each comma-separated entry, trimmed, is {@code addr/len} or a bare address (/32, /128); an empty entry,
 * a bad address, a length out of range or host bits set beyond the prefix ({@code 10.0.0.1/8}) is refused. Also the
 * one parser of address literals the client address uses: IPv4 dotted quads and IPv6 text only (never a DNS lookup),
 * an IPv4-mapped IPv6 address normalised to its IPv4 address.
 */
public final class TrustedProxies {

	public static final TrustedProxies NONE = new TrustedProxies(List.of());

	private static final String RULE = "TRUSTED_PROXIES must be a comma-separated list of IP addresses or CIDR ranges "
			+ "(addr/len, no host bits set beyond the prefix)";

	/** One range: the network's bytes (4 or 16) and its prefix length. */
	private record Range(byte[] network, int length) {

		boolean contains(byte[] address) {
			if (address.length != this.network.length) {
				return false;
			}
			return Arrays.equals(masked(address, this.length), this.network);
		}

	}

	private final List<Range> ranges;

	private TrustedProxies(List<Range> ranges) {
		this.ranges = ranges;
	}

	/** The list of {@code TRUSTED_PROXIES}; null or blank is the empty list. Throws {@link SettingsException}. */
	public static TrustedProxies parse(String list) {
		if (list == null || list.isBlank()) {
			return NONE;
		}
		List<Range> ranges = new ArrayList<>();
		for (String raw : list.split(",", -1)) {
			ranges.add(range(raw.strip()));
		}
		return new TrustedProxies(List.copyOf(ranges));
	}

	private static Range range(String entry) {
		int slash = entry.indexOf('/');
		String text = slash < 0 ? entry : entry.substring(0, slash);
		InetAddress address = literal(text);
		if (address == null) {
			throw refused(entry);
		}
		byte[] bytes = address.getAddress();
		int length = bytes.length * 8;
		if (slash >= 0) {
			String digits = entry.substring(slash + 1);
			if (digits.isEmpty() || digits.length() > 3 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
				throw refused(entry);
			}
			length = Integer.parseInt(digits);
			if (address instanceof Inet4Address && text.indexOf(':') >= 0) {
				// ::ffff:a.b.c.d/len, normalised like every address: the IPv4 range, if the prefix covers the ::ffff:0:0/96.
				if (length < 96 || length > 128) {
					throw refused(entry);
				}
				length -= 96;
			}
			if (length > bytes.length * 8) {
				throw refused(entry);
			}
		}
		if (!Arrays.equals(masked(bytes, length), bytes)) {
			throw refused(entry); // host bits set beyond the prefix
		}
		return new Range(bytes, length);
	}

	private static SettingsException refused(String entry) {
		return new SettingsException(RULE + " (got '" + entry.replaceAll("\\p{Cntrl}", "?") + "')");
	}

	private static byte[] masked(byte[] address, int length) {
		byte[] masked = address.clone();
		for (int bit = length; bit < masked.length * 8; bit++) {
			masked[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
		}
		return masked;
	}

	/** Whether {@code address} (normalised, see {@link #literal}) is in one of the ranges. */
	public boolean contains(InetAddress address) {
		if (address == null) {
			return false;
		}
		byte[] bytes = address.getAddress();
		for (Range range : this.ranges) {
			if (range.contains(bytes)) {
				return true;
			}
		}
		return false;
	}

	public boolean isEmpty() {
		return this.ranges.isEmpty();
	}

	/** The ranges in CIDR notation. */
	@Override
	public String toString() {
		List<String> cidrs = new ArrayList<>();
		for (Range range : this.ranges) {
			try {
				cidrs.add(InetAddress.getByAddress(range.network()).getHostAddress() + "/" + range.length());
			}
			catch (UnknownHostException ex) {
				throw new IllegalStateException(ex);
			}
		}
		return String.join(",", cidrs);
	}

	/**
	 * An IPv4 dotted quad (four decimal octets, no leading zeros) or an IPv6 literal (no brackets, port or zone), as an
	 * {@link InetAddress}, an IPv4-mapped IPv6 address ({@code ::ffff:192.0.2.1}) as its IPv4 address; null for
	 * anything else. Spellings of one address give one value.
	 */
	public static InetAddress literal(String value) {
		if (value == null) {
			return null;
		}
		String text = value.strip();
		if (text.isEmpty() || text.length() > 45) {
			return null;
		}
		if (text.indexOf(':') < 0) {
			return ipv4(text);
		}
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			boolean hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
			if (!(hex || c == ':' || c == '.')) {
				return null;
			}
		}
		if (text.charAt(0) == '.') {
			return null; // the JDK would take it for a host name
		}
		try {
			// Starts with a hex digit or ':' and holds a ':': the JDK parses it as an IPv6 literal, never asks DNS.
			return normalised(InetAddress.getByName(text));
		}
		catch (UnknownHostException ex) {
			return null;
		}
	}

	/** An IPv4-mapped IPv6 address as its IPv4 address (the JDK's parser already does so; a socket's may not). */
	public static InetAddress normalised(InetAddress address) {
		if (address instanceof Inet6Address) {
			byte[] bytes = address.getAddress();
			boolean mapped = bytes[10] == (byte) 0xff && bytes[11] == (byte) 0xff;
			for (int i = 0; i < 10 && mapped; i++) {
				mapped = bytes[i] == 0;
			}
			if (mapped) {
				try {
					return InetAddress.getByAddress(Arrays.copyOfRange(bytes, 12, 16));
				}
				catch (UnknownHostException ex) {
					throw new IllegalStateException(ex);
				}
			}
		}
		return address;
	}

	private static InetAddress ipv4(String text) {
		String[] parts = text.split("\\.", -1);
		if (parts.length != 4) {
			return null;
		}
		byte[] bytes = new byte[4];
		for (int i = 0; i < 4; i++) {
			String part = parts[i];
			if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch(c -> c >= '0' && c <= '9')
					|| (part.length() > 1 && part.charAt(0) == '0')) {
				return null;
			}
			int octet = Integer.parseInt(part);
			if (octet > 255) {
				return null;
			}
			bytes[i] = (byte) octet;
		}
		try {
			return InetAddress.getByAddress(bytes);
		}
		catch (UnknownHostException ex) {
			return null;
		}
	}

}
