//! Which address a request comes from, as the per-address limits see it.
//!
//! Without a proxy it is the TCP peer. Behind a reverse proxy every connection comes from
//! the proxy, so a peer on the trusted-proxy list ([`crate::config::Limits::trusted_proxies`])
//! is looked through: the client is the right-most `X-Forwarded-For` address that is not
//! itself a trusted proxy (the left part of the header is whatever the client sent, and
//! cannot be trusted). An untrusted peer's `X-Forwarded-For` is ignored.

use std::net::IpAddr;

/// The client's address, attached to every request by [`crate::listener`]; handlers read
/// it with `Extension<ClientAddr>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddr(pub IpAddr);

/// The client address of a request from `peer` with `forwarded_for` (the
/// `X-Forwarded-For` header, if any), given the `trusted` proxies.
pub fn client_addr(peer: IpAddr, forwarded_for: Option<&str>, trusted: &[IpAddr]) -> IpAddr {
    if !trusted.contains(&peer) {
        return peer;
    }
    let Some(header) = forwarded_for else {
        return peer;
    };
    let mut last = peer;
    for entry in header.rsplit(',') {
        match entry.trim().parse::<IpAddr>() {
            Ok(ip) => {
                let ip = ip.to_canonical();
                if !trusted.contains(&ip) {
                    return ip;
                }
                last = ip;
            }
            // A malformed entry: nothing left of it can be trusted.
            Err(_) => return last,
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    #[test]
    fn forwarded_for_is_read_only_from_trusted_proxies() {
        let proxy = ip("10.0.0.1");
        let trusted = [proxy];
        let client = ip("203.0.113.7");
        assert_eq!(
            client_addr(client, Some("1.2.3.4"), &trusted),
            client,
            "untrusted peer"
        );
        assert_eq!(client_addr(proxy, None, &trusted), proxy);
        assert_eq!(client_addr(proxy, Some("203.0.113.7"), &trusted), client);
        // The client may prepend anything; the proxy appends the real address.
        assert_eq!(
            client_addr(proxy, Some("6.6.6.6, 203.0.113.7"), &trusted),
            client
        );
        assert_eq!(
            client_addr(proxy, Some("203.0.113.7, 10.0.0.1"), &trusted),
            client
        );
        assert_eq!(client_addr(proxy, Some("garbage"), &trusted), proxy);
    }
}
