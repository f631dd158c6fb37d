package io.simpleauth.web;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Enumeration;

import io.simpleauth.config.Settings;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.stereotype.Component;

/**
 * The client address the per-address limit counts (spec/README §8): the socket's peer, unless
 * {@code TRUST_PROXY_HEADERS=true} — behind fly.io's proxy — and then the first of {@code Fly-Client-IP}, the last entry
 * of {@code X-Forwarded-For} (the one the proxy added) and the peer, a value that is not an IP address skipped. Read
 * here, not by Tomcat's RemoteIpValve or Spring's ForwardedHeaderFilter, which would trust the headers on their own
 * terms ({@code server.forward-headers-strategy=none}). Literals only: nothing is ever looked up in DNS.
 */
@Component
public class ClientAddress {

	static final String FLY_CLIENT_IP = "Fly-Client-IP";

	static final String X_FORWARDED_FOR = "X-Forwarded-For";

	private final boolean trustProxyHeaders;

	public ClientAddress(Settings settings) {
		this.trustProxyHeaders = settings.trustProxyHeaders();
	}

	/** The request's client address, or null if even the peer is not an IP address. */
	public InetAddress of(HttpServletRequest request) {
		if (!this.trustProxyHeaders) {
			return parse(request.getRemoteAddr());
		}
		return resolve(request.getHeader(FLY_CLIENT_IP), lastHeader(request.getHeaders(X_FORWARDED_FOR)),
				request.getRemoteAddr());
	}

	/** With the proxy headers trusted: Fly-Client-IP, else the last X-Forwarded-For entry, else the peer. */
	static InetAddress resolve(String flyClientIp, String forwardedFor, String peer) {
		InetAddress address = parse(flyClientIp);
		if (address == null && forwardedFor != null) {
			address = parse(forwardedFor.substring(forwardedFor.lastIndexOf(',') + 1));
		}
		return address != null ? address : parse(peer);
	}

	private static String lastHeader(Enumeration<String> values) {
		String last = null;
		while (values != null && values.hasMoreElements()) {
			last = values.nextElement();
		}
		return last;
	}

	/**
	 * An IPv4 dotted quad or an IPv6 literal (surrounding spaces allowed), as an {@link InetAddress} — so that spellings
	 * of one address count as one ({@code ::ffff:192.0.2.1} is {@code 192.0.2.1}) — or null for anything else: a host
	 * name, a port, brackets, a zone, garbage.
	 */
	static InetAddress parse(String value) {
		if (value == null) {
			return null;
		}
		String text = value.strip();
		if (text.isEmpty() || text.length() > 45) {
			return null;
		}
		if (text.indexOf(':') < 0) {
			return parseIpv4(text);
		}
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			boolean hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
			if (!(hex || c == ':' || c == '.')) {
				return null;
			}
		}
		if (text.charAt(0) == '.') {
			return null;
		}
		try {
			// Starts with a hex digit or ':' and holds a ':': the JDK parses it as an IPv6 literal, never asks DNS.
			return InetAddress.getByName(text);
		}
		catch (UnknownHostException ex) {
			return null;
		}
	}

	private static InetAddress parseIpv4(String text) {
		String[] parts = text.split("\\.", -1);
		if (parts.length != 4) {
			return null;
		}
		byte[] bytes = new byte[4];
		for (int i = 0; i < 4; i++) {
			String part = parts[i];
			if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch(c -> c >= '0' && c <= '9')) {
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
