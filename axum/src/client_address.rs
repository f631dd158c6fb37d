//! `ClientAddress`: the address the per-address login limit counts (contract
//! §8). The socket's peer, unless TRUST_PROXY_HEADERS=true (behind fly.io's
//! proxy): then `Fly-Client-IP`, else the last `X-Forwarded-For` entry (the
//! one the proxy added), else the peer. A header value that is not an IP
//! address is skipped.
//!
//! `ClientIp` is the extractor a handler takes: the peer comes from
//! `ConnectInfo<SocketAddr>` (the server is made with
//! `into_make_service_with_connect_info`), the policy from the `AppState`.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::HeaderMap;
use axum::http::request::Parts;

use crate::app_state::SharedState;

pub const FLY_CLIENT_IP: &str = "fly-client-ip";
pub const X_FORWARDED_FOR: &str = "x-forwarded-for";

/// How the client address is found: from the socket only, or from the proxy's headers first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddress {
    pub trust_proxy_headers: bool,
}

impl ClientAddress {
    /// The client address of a request from `peer` with `headers`; `None`
    /// when not even the peer is known.
    pub fn resolve(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<IpAddr> {
        let proxied = || {
            let fly = headers.get(FLY_CLIENT_IP).and_then(|v| v.to_str().ok()).and_then(ip);
            // Several X-Forwarded-For lines read as one list; the last entry is the proxy's.
            let forwarded = || {
                headers
                    .get_all(X_FORWARDED_FOR)
                    .iter()
                    .next_back()
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.rsplit(',').next())
                    .and_then(ip)
            };
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

/// The request's client address as `ClientAddress` resolves it. Never
/// rejects: an unknown address is `ClientIp(None)` (and not limited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub Option<IpAddr>);

impl FromRequestParts<SharedState> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &SharedState) -> Result<Self, Self::Rejection> {
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(peer)| peer.ip());
        Ok(ClientIp(state.client_address.resolve(peer, &parts.headers)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::header::{HeaderName, HeaderValue};

    const PEER: &str = "10.0.0.9";

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).expect("name"),
                HeaderValue::from_str(value).expect("value"),
            );
        }
        map
    }

    fn resolve(trust: bool, pairs: &[(&str, &str)]) -> Option<String> {
        let peer = Some(PEER.parse().expect("peer"));
        ClientAddress { trust_proxy_headers: trust }.resolve(peer, &headers(pairs)).map(|a| a.to_string())
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
        let cases: [(&[(&str, &str)], &str); 11] = [
            (&[("Fly-Client-IP", "203.0.113.7"), ("X-Forwarded-For", "198.51.100.1")], "203.0.113.7"),
            (&[("Fly-Client-IP", " 2001:db8::1 ")], "2001:db8::1"),
            (&[("X-Forwarded-For", "1.1.1.1, 2.2.2.2, 198.51.100.1")], "198.51.100.1"),
            (&[("X-Forwarded-For", "1.1.1.1"), ("X-Forwarded-For", "3.3.3.3,198.51.100.2")], "198.51.100.2"),
            // Garbage is skipped: the next source answers.
            (&[("Fly-Client-IP", "not-an-ip"), ("X-Forwarded-For", "198.51.100.1")], "198.51.100.1"),
            (&[("Fly-Client-IP", "")], PEER),
            (&[("Fly-Client-IP", "1.2.3.4:80")], PEER),
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
        assert_eq!(trusted.resolve(None, &headers(&[])), None);
        assert_eq!(
            trusted.resolve(None, &headers(&[("X-Forwarded-For", "192.0.2.1")])),
            Some("192.0.2.1".parse().expect("ip"))
        );
        let untrusted = ClientAddress { trust_proxy_headers: false };
        assert_eq!(untrusted.resolve(None, &headers(&[("Fly-Client-IP", "192.0.2.1")])), None);
    }

    #[test]
    fn a_mapped_peer_is_its_ipv4_address() {
        let peer = Some("::ffff:127.0.0.1".parse().expect("ip"));
        let untrusted = ClientAddress { trust_proxy_headers: false };
        assert_eq!(untrusted.resolve(peer, &headers(&[])), Some("127.0.0.1".parse().expect("ip")));
    }
}
