//! `ClientAddress`: the address the per-address login limit counts (contract
//! §8). The socket's peer, unless the peer is one of TRUSTED_PROXIES: then
//! `X-Forwarded-For` is walked from the nearest hop back, and the client is
//! the nearest address that is not a trusted proxy. `Fly-Client-IP`,
//! `Forwarded` and every other header are never read.
//!
//! Addresses are normalised first: an IPv4-mapped IPv6 address
//! (`::ffff:a.b.c.d`, as a dual-stack socket reports an IPv4 peer) is the
//! IPv4 address.

use std::net::IpAddr;

pub const X_FORWARDED_FOR: &str = "x-forwarded-for";

/// A header field the front end could not read as visible ASCII: one entry
/// that is not an address, so the walk stops there.
pub const UNREADABLE: &str = "unreadable";

/// One TRUSTED_PROXIES entry: `addr/len`, or a bare address (/32 or /128).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// An entry of TRUSTED_PROXIES, already trimmed; `Err` says what is wrong.
    /// Host bits set beyond the prefix (`10.0.0.1/8`) are refused: the entry
    /// would not mean what it seems to.
    pub fn parse(entry: &str) -> Result<Cidr, String> {
        let (address, prefix) = match entry.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (entry, None),
        };
        let network = ip_literal(address).ok_or_else(|| format!("{entry:?} is not an IP address or CIDR"))?;
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => bits,
            Some(text) => match text.parse::<u8>() {
                Ok(len) if text.bytes().all(|b| b.is_ascii_digit()) && len <= bits => len,
                _ => return Err(format!("{entry:?}: the prefix length must be a number from 0 to {bits}")),
            },
        };
        let cidr = Cidr { network, prefix };
        if masked(network, prefix) != network {
            return Err(format!("{entry:?} has host bits set beyond the /{prefix} prefix"));
        }
        Ok(cidr)
    }

    pub fn contains(&self, address: IpAddr) -> bool {
        address.is_ipv4() == self.network.is_ipv4() && masked(address, self.prefix) == self.network
    }
}

/// `address` with every bit beyond the first `prefix` cleared.
fn masked(address: IpAddr, prefix: u8) -> IpAddr {
    match address {
        IpAddr::V4(v4) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::from((u32::from(v4) & mask).to_be_bytes())
        }
        IpAddr::V6(v6) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::from((u128::from(v6) & mask).to_be_bytes())
        }
    }
}

/// The key of the per-address limit: an IPv4 address as is, an IPv6 address
/// by its /64 (one subscriber's network, whose hosts are the subscriber's to pick).
pub fn limit_key(address: IpAddr) -> IpAddr {
    let address = address.to_canonical();
    if address.is_ipv6() { masked(address, 64) } else { address }
}

/// An IP address literal (IPv4 dotted quad or IPv6 text; no port, brackets
/// or zone), normalised.
fn ip_literal(text: &str) -> Option<IpAddr> {
    text.parse::<IpAddr>().ok().map(|address| address.to_canonical())
}

/// TRUSTED_PROXIES: the proxies whose `X-Forwarded-For` entries are believed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientAddress {
    trusted: Vec<Cidr>,
}

impl ClientAddress {
    pub fn new(trusted: Vec<Cidr>) -> Self {
        ClientAddress { trusted }
    }

    /// TRUSTED_PROXIES's value: comma-separated entries, each trimmed; an
    /// empty value is no proxy, an empty entry (`a,,b`) is refused.
    pub fn parse(value: &str) -> Result<Self, String> {
        if value.trim().is_empty() {
            return Ok(ClientAddress::default());
        }
        let trusted = value
            .split(',')
            .map(str::trim)
            .map(|entry| if entry.is_empty() { Err("an entry is empty".to_owned()) } else { Cidr::parse(entry) })
            .collect::<Result<_, _>>()?;
        Ok(ClientAddress { trusted })
    }

    pub fn is_trusted(&self, address: IpAddr) -> bool {
        self.trusted.iter().any(|cidr| cidr.contains(address))
    }

    /// The client address of a request from `peer`; `None` when the peer is
    /// not known. `forwarded_for` gives every `X-Forwarded-For` field of the
    /// request in order (`UNREADABLE` for one that is not visible ASCII); it
    /// is asked for only when the peer is a trusted proxy.
    pub fn resolve<'h, I>(&self, peer: Option<IpAddr>, forwarded_for: impl FnOnce() -> I) -> Option<IpAddr>
    where
        I: IntoIterator<Item = &'h str>,
    {
        let mut client = peer?.to_canonical();
        if !self.is_trusted(client) {
            return Some(client);
        }
        // The fields read as one comma-separated list (RFC 9110 §5.3), the last entry the nearest hop.
        let fields: Vec<&str> = forwarded_for().into_iter().collect();
        let entries = fields.into_iter().rev().flat_map(|field| field.rsplit(',')).map(str::trim);
        for entry in entries.filter(|entry| !entry.is_empty()) {
            let Some(address) = ip_literal(entry) else { break };
            client = address;
            if !self.is_trusted(address) {
                break;
            }
        }
        Some(client)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("ip")
    }

    fn proxies(value: &str) -> ClientAddress {
        ClientAddress::parse(value).expect(value)
    }

    #[test]
    fn cidr_entries_are_parsed_and_matched() {
        let cases: [(&str, &[&str], &[&str]); 9] = [
            ("10.0.0.0/8", &["10.0.0.1", "10.255.255.255", "::ffff:10.1.2.3"], &["11.0.0.0", "9.255.255.255"]),
            ("192.0.2.7", &["192.0.2.7"], &["192.0.2.8", "::ffff:192.0.2.8"]),
            ("192.0.2.7/32", &["192.0.2.7"], &["192.0.2.6"]),
            ("0.0.0.0/0", &["1.2.3.4", "255.255.255.255"], &["::1", "2001:db8::1"]),
            ("fdaa::/16", &["fdaa::1", "fdaa:0:1::3"], &["fdab::1", "10.0.0.1"]),
            ("2001:db8::1", &["2001:db8::1"], &["2001:db8::2"]),
            ("2001:db8::/128", &["2001:db8::"], &["2001:db8::1"]),
            ("::/0", &["::1", "2001:db8::1"], &["127.0.0.1"]),
            ("::ffff:192.0.2.9", &["192.0.2.9", "::ffff:192.0.2.9"], &["192.0.2.10"]),
        ];
        for (entry, inside, outside) in cases {
            let cidr = Cidr::parse(entry).expect(entry);
            for address in inside {
                assert!(cidr.contains(ip(address).to_canonical()), "{address} in {entry}");
            }
            for address in outside {
                assert!(!cidr.contains(ip(address).to_canonical()), "{address} not in {entry}");
            }
        }
    }

    #[test]
    fn bad_entries_are_refused() {
        for bad in [
            "10.0.0.1/8",
            "2001:db8::1/64",
            "10.0.0.0/33",
            "::/129",
            "10.0.0.0/",
            "10.0.0.0/-1",
            "10.0.0.0/+8",
            "10.0.0.0/8/8",
            "10.0.0.0/ 8",
            "/8",
            "10.0.0",
            "999.0.0.0",
            "10.0.0.0:80",
            "[::1]",
            "fe80::1%eth0",
            "localhost",
            "",
        ] {
            assert!(Cidr::parse(bad).is_err(), "{bad:?} accepted");
        }
        for bad in ["10.0.0.0/8,,192.0.2.1", "10.0.0.0/8,", ",10.0.0.0/8", "10.0.0.0/8, ,::1", "10.0.0.1/8"] {
            assert!(ClientAddress::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(ClientAddress::parse("").expect("empty"), ClientAddress::default());
        assert_eq!(ClientAddress::parse("   ").expect("blank"), ClientAddress::default());
        let listed = proxies(" 10.0.0.0/8 ,\t2001:db8::/32 , 192.0.2.7");
        assert!(listed.is_trusted(ip("10.9.9.9")) && listed.is_trusted(ip("2001:db8:1::1")));
        assert!(listed.is_trusted(ip("192.0.2.7")) && !listed.is_trusted(ip("192.0.2.8")));
    }

    /// `resolve` over the given `X-Forwarded-For` fields, in the order sent.
    fn walk(trusted: &str, peer: &str, fields: &[&str]) -> Option<String> {
        proxies(trusted).resolve(Some(ip(peer)), || fields.iter().copied()).map(|a| a.to_string())
    }

    #[test]
    fn the_walk_takes_the_nearest_untrusted_hop() {
        let proxy = "10.0.0.0/8, 2001:db8:ffff::/48";
        let cases: [(&str, &[&str], &str); 21] = [
            // An untrusted peer is the client; no header is read.
            ("192.0.2.50", &["198.51.100.1"], "192.0.2.50"),
            ("::ffff:192.0.2.50", &[], "192.0.2.50"),
            // A trusted peer without entries: the peer.
            ("10.0.0.2", &[], "10.0.0.2"),
            ("10.0.0.2", &["", " , "], "10.0.0.2"),
            // The last entry is the nearest hop.
            ("10.0.0.2", &["198.51.100.1"], "198.51.100.1"),
            ("10.0.0.2", &["1.1.1.1, 2.2.2.2, 198.51.100.1"], "198.51.100.1"),
            ("10.0.0.2", &["1.1.1.1", "3.3.3.3,198.51.100.2"], "198.51.100.2"),
            ("10.0.0.2", &["1.1.1.1, 198.51.100.3", ""], "198.51.100.3"),
            // Trusted hops are passed over.
            ("10.0.0.2", &["203.0.113.9, 10.0.0.7, 10.1.1.1"], "203.0.113.9"),
            ("10.0.0.2", &["203.0.113.9", "10.0.0.7", "10.1.1.1"], "203.0.113.9"),
            ("10.0.0.2", &["203.0.113.9,,10.0.0.7"], "203.0.113.9"),
            // Every entry trusted: the farthest.
            ("10.0.0.2", &["10.0.0.5, 10.0.0.6"], "10.0.0.5"),
            // Not an address literal: the walk stops at the last address reached.
            ("10.0.0.2", &["198.51.100.1, unknown"], "10.0.0.2"),
            ("10.0.0.2", &["198.51.100.1, 198.51.100.7:443, 10.0.0.9"], "10.0.0.9"),
            ("10.0.0.2", &["198.51.100.1, 198.51.100.7:443"], "10.0.0.2"),
            ("10.0.0.2", &["198.51.100.1, [2001:db8::1]"], "10.0.0.2"),
            ("10.0.0.2", &["198.51.100.1", UNREADABLE], "10.0.0.2"),
            ("10.0.0.2", &["fe80::1%eth0"], "10.0.0.2"),
            // Normalised: a mapped entry is its IPv4 address, and may be trusted.
            ("10.0.0.2", &["::ffff:198.51.100.4"], "198.51.100.4"),
            ("10.0.0.2", &["198.51.100.5, ::ffff:10.0.0.3"], "198.51.100.5"),
            // IPv6 peers and hops.
            ("2001:db8:ffff::1", &["2001:db8::5, 2001:db8:ffff:1::9"], "2001:db8::5"),
        ];
        for (peer, fields, expected) in cases {
            assert_eq!(walk(proxy, peer, fields).as_deref(), Some(expected), "peer {peer} fields {fields:?}");
        }
    }

    #[test]
    fn without_trusted_proxies_headers_are_never_read() {
        let address = ClientAddress::default();
        let read = address.resolve(Some(ip("10.0.0.2")), || -> std::iter::Empty<&str> { panic!("read") });
        assert_eq!(read, Some(ip("10.0.0.2")));
        assert_eq!(address.resolve(None, || ["192.0.2.1"].into_iter()), None);
        assert_eq!(proxies("0.0.0.0/0").resolve(None, || ["192.0.2.1"].into_iter()), None);
    }

    #[test]
    fn the_limit_key_is_the_ipv4_address_or_the_ipv6_slash_64() {
        for (address, key) in [
            ("192.0.2.1", "192.0.2.1"),
            ("::ffff:192.0.2.1", "192.0.2.1"),
            ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::"),
            ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::"),
            ("2001:db8:1:3::1", "2001:db8:1:3::"),
            ("::1", "::"),
        ] {
            assert_eq!(limit_key(ip(address)), ip(key), "{address}");
        }
    }
}
