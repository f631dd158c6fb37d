package io.simpleauth.web;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;

import io.simpleauth.config.Settings;
import io.simpleauth.config.TrustedProxies;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * The client address the per-address limit counts (spec/README §8). The socket's peer, unless it is one of
 * {@code TRUSTED_PROXIES}: then {@code X-Forwarded-For} is walked from the nearest hop back — every field of the header
 * in order, joined as one list (RFC 9110 §5.3), entries trimmed, empty ones skipped — and the client is the first
 * entry not in {@code TRUSTED_PROXIES}; an entry that is not an IP address literal stops the walk at the last
 * (trusted) address reached; all entries trusted, the farthest one. {@code Fly-Client-IP} and every other header are
 * ignored. Read here, not by Tomcat's RemoteIpValve or Spring's ForwardedHeaderFilter, whose rules differ
 * ({@code server.forward-headers-strategy=none}). Addresses are normalised (IPv4-mapped IPv6 is IPv4); literals only:
 * nothing is ever looked up in DNS.
 */
@Component
public class ClientAddress {

	static final String X_FORWARDED_FOR = "X-Forwarded-For";

	private final TrustedProxies proxies;

	@Autowired
	public ClientAddress(Settings settings) {
		this(settings.proxies());
	}

	ClientAddress(TrustedProxies proxies) {
		this.proxies = proxies;
	}

	/** The request's client address, or null if even the peer is not an IP address. */
	public InetAddress of(HttpServletRequest request) {
		InetAddress peer = peer(request.getRemoteAddr());
		if (peer == null || !this.proxies.contains(peer)) {
			return peer; // no header is read
		}
		return walk(peer, forwardedFor(request.getHeaders(X_FORWARDED_FOR)));
	}

	/** From a trusted {@code peer}, the X-Forwarded-For entries (farthest first) walked from the nearest. */
	InetAddress walk(InetAddress peer, List<String> entries) {
		InetAddress reached = peer;
		for (int i = entries.size() - 1; i >= 0; i--) {
			InetAddress hop = TrustedProxies.literal(entries.get(i));
			if (hop == null) {
				return reached;
			}
			if (!this.proxies.contains(hop)) {
				return hop;
			}
			reached = hop;
		}
		return reached;
	}

	/** Every X-Forwarded-For field in order, as one list: entries trimmed, empty ones skipped. */
	static List<String> forwardedFor(Enumeration<String> fields) {
		List<String> entries = new ArrayList<>();
		while (fields != null && fields.hasMoreElements()) {
			String field = fields.nextElement();
			if (field == null) {
				continue;
			}
			for (String entry : field.split(",", -1)) {
				String trimmed = entry.strip();
				if (!trimmed.isEmpty()) {
					entries.add(trimmed);
				}
			}
		}
		return entries;
	}

	/** The socket's peer as Tomcat gives it; an IPv6 zone (link-local peers) dropped. */
	static InetAddress peer(String remoteAddr) {
		if (remoteAddr == null) {
			return null;
		}
		int zone = remoteAddr.indexOf('%');
		return TrustedProxies.literal(zone < 0 ? remoteAddr : remoteAddr.substring(0, zone));
	}

}
