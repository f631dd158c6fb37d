//! `ClientAddress`: the address the per-address login limit counts (contract
//! §8). The socket's peer, unless TRUST_PROXY_HEADERS=true (behind fly.io's
//! proxy): then `Fly-Client-IP`, else the last `X-Forwarded-For` entry (the
//! one the proxy added), else the peer. A header value that is not an IP
//! address is skipped. `Forwarded` and the first `X-Forwarded-For` entries
//! are never believed: a client can write them.
//!
//! The front end reads the peer and the two headers from its request; the
//! headers are asked for only when they are trusted.

use std::net::IpAddr;

pub const FLY_CLIENT_IP: &str = "fly-client-ip";
pub const X_FORWARDED_FOR: &str = "x-forwarded-for";

/// How the client address is found: from the socket only, or from the proxy's headers first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddress {
    pub trust_proxy_headers: bool,
}

impl ClientAddress {
    /// The client address of a request from `peer`; `None` when not even the
    /// peer is known. `fly_client_ip` gives the first `Fly-Client-IP` value,
    /// `last_forwarded_for` the last `X-Forwarded-For` line (several lines
    /// read as one list, so the last line holds the proxy's entry), each
    /// `None` when absent or not visible ASCII.
    pub fn resolve<'h>(
        &self,
        peer: Option<IpAddr>,
        fly_client_ip: impl FnOnce() -> Option<&'h str>,
        last_forwarded_for: impl FnOnce() -> Option<&'h str>,
    ) -> Option<IpAddr> {
        let proxied = || {
            let fly = fly_client_ip().and_then(ip);
            let forwarded = || last_forwarded_for().and_then(|v| v.rsplit(',').next()).and_then(ip);
            fly.or_else(forwarded)
        };
        let found = if self.trust_proxy_headers { proxied().or(peer) } else { peer };
        // One address, one count: ::ffff:a.b.c.d is a.b.c.d.
        found.map(|addr| addr.to_canonical())
    }
}

fn ip(value: &str) -> Option<IpAddr> {
    value.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEER: &str = "10.0.0.9";

    /// `ClientAddress::resolve` over header lines in the order sent.
    fn resolve_with(address: ClientAddress, peer: Option<IpAddr>, pairs: &[(&str, &str)]) -> Option<IpAddr> {
        let values =
            |name: &'static str| pairs.iter().filter(move |(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| *v);
        address.resolve(peer, || values(FLY_CLIENT_IP).next(), || values(X_FORWARDED_FOR).next_back())
    }

    fn resolve(trust: bool, pairs: &[(&str, &str)]) -> Option<String> {
        let peer = Some(PEER.parse().expect("peer"));
        resolve_with(ClientAddress { trust_proxy_headers: trust }, peer, pairs).map(|a| a.to_string())
    }

    #[test]
    fn untrusted_headers_are_ignored() {
        for pairs in [
            &[][..],
            &[("Fly-Client-IP", "203.0.113.7")],
            &[("X-Forwarded-For", "203.0.113.7")],
            &[("Forwarded", "for=203.0.113.7"), ("X-Real-IP", "203.0.113.8")],
        ] {
            assert_eq!(resolve(false, pairs).as_deref(), Some(PEER), "{pairs:?}");
        }
    }

    #[test]
    fn trusted_headers_in_the_contracts_order() {
        let cases: [(&[(&str, &str)], &str); 12] = [
            (&[("Fly-Client-IP", "203.0.113.7"), ("X-Forwarded-For", "198.51.100.1")], "203.0.113.7"),
            (&[("Fly-Client-IP", " 2001:db8::1 ")], "2001:db8::1"),
            (&[("X-Forwarded-For", "1.1.1.1, 2.2.2.2, 198.51.100.1")], "198.51.100.1"),
            (&[("X-Forwarded-For", "1.1.1.1"), ("X-Forwarded-For", "3.3.3.3,198.51.100.2")], "198.51.100.2"),
            // Garbage is skipped: the next source answers.
            (&[("Fly-Client-IP", "not-an-ip"), ("X-Forwarded-For", "198.51.100.1")], "198.51.100.1"),
            (&[("Fly-Client-IP", "")], PEER),
            (&[("Fly-Client-IP", "1.2.3.4:80")], PEER),
            // The first Fly-Client-IP line is the proxy's.
            (&[("Fly-Client-IP", "192.0.2.9"), ("Fly-Client-IP", "192.0.2.10")], "192.0.2.9"),
            // Only the last entry counts; the ones before it are the client's to write.
            (&[("X-Forwarded-For", "198.51.100.1, unknown")], PEER),
            (&[("X-Forwarded-For", "198.51.100.1,")], PEER),
            (&[("Fly-Client-IP", "999.1.1.1"), ("X-Forwarded-For", "garbage")], PEER),
            (&[("Fly-Client-IP", "::ffff:192.0.2.5")], "192.0.2.5"),
        ];
        for (pairs, expected) in cases {
            assert_eq!(resolve(true, pairs).as_deref(), Some(expected), "{pairs:?}");
        }
    }

    #[test]
    fn no_peer_and_no_header_is_no_address() {
        let trusted = ClientAddress { trust_proxy_headers: true };
        assert_eq!(resolve_with(trusted, None, &[]), None);
        assert_eq!(
            resolve_with(trusted, None, &[("X-Forwarded-For", "192.0.2.1")]),
            Some("192.0.2.1".parse().expect("ip"))
        );
        let untrusted = ClientAddress { trust_proxy_headers: false };
        assert_eq!(resolve_with(untrusted, None, &[("Fly-Client-IP", "192.0.2.1")]), None);
    }

    #[test]
    fn a_mapped_peer_is_its_ipv4_address() {
        let peer = Some("::ffff:127.0.0.1".parse().expect("ip"));
        let untrusted = ClientAddress { trust_proxy_headers: false };
        assert_eq!(resolve_with(untrusted, peer, &[]), Some("127.0.0.1".parse().expect("ip")));
    }
}
