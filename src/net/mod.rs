//! Network failures as both HTTP clients meet them (the MCP transport's, `mcp/transport/http.rs`,
//! and the model client's, `agent/http.rs`): the cause chain of an error walked link by link,
//! the failure of the network under HTTP found in it (DNS, TLS, a socket refused or reset, a
//! socket timeout), a resolver whose failures say so by their type, and the TLS provider.

pub mod http1;

use std::error::Error as StdError;
use std::net::SocketAddr;
use std::sync::Once;

/// Installs rustls' `ring` provider as the process default, once (docs/ARCHITECTURE.md §4: builds
/// in about half the time of aws-lc). A provider installed earlier by someone else is kept.
pub fn install_tls_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// What failed under HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetClass {
    /// The host name did not resolve.
    Dns,
    /// The TLS handshake failed.
    Tls,
    /// The connection was refused, or the host is unreachable.
    Refused,
    /// The connection was made, then reset or aborted by the other end (or on the way).
    Dropped,
    /// The socket timed out.
    Timeout,
}

/// A failure under HTTP, in words that name `authority`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetFailure {
    pub class: NetClass,
    pub message: String,
}

/// The links of an error's cause chain, outermost first. `io::Error::source` skips the error it
/// wraps (it returns that error's source), so the walk steps into it by hand: a rustls error
/// reaches a client as an `io::Error` around it. `step` steps into errors of other types that
/// hide their cause the same way.
pub fn links_with<'a>(
    err: &'a (dyn StdError + 'static),
    step: impl Fn(&'a (dyn StdError + 'static)) -> Option<&'a (dyn StdError + 'static)>,
) -> Vec<&'a (dyn StdError + 'static)> {
    std::iter::successors(Some(err), |e| {
        if let Some(inner) = step(*e) {
            return Some(inner);
        }
        if let Some(inner) = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            return Some(inner as &(dyn StdError + 'static));
        }
        (*e).source()
    })
    .take(32)
    .collect()
}

/// [`links_with`] stepping into no other type.
pub fn links<'a>(err: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    links_with(err, |_| None)
}

/// The failure under HTTP that one of `links` is, if any: our resolver's, a rustls error, or
/// a socket error of a kind that says the peer cannot be reached or did not answer in time.
pub fn failure(links: &[&(dyn StdError + 'static)], authority: &str) -> Option<NetFailure> {
    let fail = |class, message: String| Some(NetFailure { class, message });
    if let Some(dns) = links.iter().find_map(|e| e.downcast_ref::<DnsFailure>()) {
        return fail(NetClass::Dns, dns.to_string());
    }
    if let Some(tls) = links.iter().find_map(|e| e.downcast_ref::<rustls::Error>()) {
        return fail(
            NetClass::Tls,
            format!(
                "TLS handshake with {authority} failed: {}",
                plain_names(&tls.to_string())
            ),
        );
    }
    links.iter().find_map(|e| {
        use std::io::ErrorKind as K;
        let io = e.downcast_ref::<std::io::Error>()?;
        match io.kind() {
            K::ConnectionRefused => fail(
                NetClass::Refused,
                format!("connection to {authority} refused (nothing listening there?)"),
            ),
            K::AddrNotAvailable | K::HostUnreachable | K::NetworkUnreachable => fail(
                NetClass::Refused,
                format!("cannot connect to {authority}: {io}"),
            ),
            // Only a connection that was made can be reset: the server was reached.
            K::ConnectionReset | K::ConnectionAborted | K::NotConnected => fail(
                NetClass::Dropped,
                format!("{authority} dropped the connection before its answer was complete ({io})"),
            ),
            K::TimedOut => fail(
                NetClass::Timeout,
                format!("{authority} did not answer in time: {io}"),
            ),
            _ => None,
        }
    })
}

/// `text` with the names of a certificate as people write them: rustls quotes them in its
/// debug form (`only valid for DnsName("a.example") or IpAddress(10.0.0.1)`).
fn plain_names(text: &str) -> String {
    const FORMS: [(&str, &str); 3] = [
        ("DnsName(\"", "\")"),
        ("UniformResourceIdentifier(\"", "\")"),
        ("IpAddress(", ")"),
    ];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = FORMS
            .iter()
            .filter_map(|(open, close)| rest.find(open).map(|at| (at, *open, *close)))
            .min_by_key(|(at, _, _)| *at);
        let Some((at, open, close)) = next else {
            break;
        };
        let inner = at + open.len();
        let Some(len) = rest[inner..].find(close) else {
            break;
        };
        out.push_str(&rest[..at]);
        out.push_str(&rest[inner..inner + len]);
        rest = &rest[inner + len + close.len()..];
    }
    out.push_str(rest);
    out
}

/// A host name that did not resolve.
#[derive(Debug, thiserror::Error)]
#[error("cannot resolve host {host}: {reason}")]
pub struct DnsFailure {
    pub host: String,
    pub reason: String,
}

/// The addresses of `host` (getaddrinfo through tokio), `port` on each; a failure, or no
/// address, is a [`DnsFailure`].
pub async fn lookup(host: &str, port: u16) -> Result<Vec<SocketAddr>, DnsFailure> {
    // A bracketed IPv6 literal, as a URL's authority writes it.
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let fail = |reason: String| DnsFailure {
        host: host.to_string(),
        reason,
    };
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((bare, port))
        .await
        .map_err(|e| fail(e.to_string()))?
        .collect();
    if addrs.is_empty() {
        return Err(fail("no addresses".into()));
    }
    Ok(addrs)
}

/// reqwest's resolver through [`lookup`], so that [`failure`] recognises its failures.
pub struct Resolver;

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            match lookup(&host, 0).await {
                Ok(addrs) => Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs),
                Err(e) => Err(Box::new(e) as Box<dyn StdError + Send + Sync>),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rustls_error_inside_an_io_error_is_a_tls_failure() {
        let tls = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::General("bad cert".into()),
        );
        let found = failure(&links(&tls), "h:1").map(|f| f.class);
        assert_eq!(found, Some(NetClass::Tls));
        // The plain source walk never sees it.
        assert!(std::error::Error::source(&tls).is_none());
    }

    #[test]
    fn certificate_names_are_written_plainly() {
        let wrong =
            rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForNameContext {
                expected: rustls::pki_types::ServerName::try_from("a.example")
                    .expect("a name")
                    .to_owned(),
                presented: vec![
                    "DnsName(\"b.example\")".into(),
                    "IpAddress(10.0.0.1)".into(),
                ],
            });
        let io = std::io::Error::other(wrong);
        let message = failure(&links(&io), "a.example:443")
            .map(|f| f.message)
            .unwrap_or_default();
        assert_eq!(
            message,
            "TLS handshake with a.example:443 failed: invalid peer certificate: certificate not valid for name \"a.example\"; certificate is only valid for b.example or 10.0.0.1"
        );
        assert_eq!(plain_names("DnsName(\"x"), "DnsName(\"x");
    }

    #[test]
    fn socket_kinds_and_dns_failures_get_their_class() {
        let kind = |k| {
            let e = std::io::Error::from(k);
            failure(&links(&e), "h:1").map(|f| f.class)
        };
        use std::io::ErrorKind as K;
        assert_eq!(kind(K::ConnectionRefused), Some(NetClass::Refused));
        assert_eq!(kind(K::HostUnreachable), Some(NetClass::Refused));
        // A reset needs a connection: the server was reached.
        assert_eq!(kind(K::ConnectionReset), Some(NetClass::Dropped));
        assert_eq!(kind(K::ConnectionAborted), Some(NetClass::Dropped));
        assert_eq!(kind(K::TimedOut), Some(NetClass::Timeout));
        assert_eq!(kind(K::InvalidData), None);
        let dns = DnsFailure {
            host: "nowhere.invalid".into(),
            reason: "not known".into(),
        };
        let f = failure(&links(&dns), "h:1").unwrap();
        assert_eq!(f.class, NetClass::Dns);
        assert_eq!(f.message, "cannot resolve host nowhere.invalid: not known");
    }

    #[tokio::test]
    async fn an_address_literal_resolves_to_itself() {
        let v4 = lookup("127.0.0.1", 8080).await.unwrap();
        assert_eq!(v4, vec!["127.0.0.1:8080".parse().unwrap()]);
        let v6 = lookup("[::1]", 80).await.unwrap();
        assert_eq!(v6, vec!["[::1]:80".parse().unwrap()]);
    }
}

/// Where a `--http ADDR` (`--listen`, `--serve-http`) binds: `HOST:PORT` as given, a bare `PORT` on the loopback address.
pub fn bind_address(addr: &str) -> String {
    match addr.parse::<u16>() {
        Ok(port) => SocketAddr::from(([127, 0, 0, 1], port)).to_string(),
        Err(_) => addr.to_string(),
    }
}

#[cfg(test)]
mod bind_tests {
    use super::*;

    #[test]
    fn a_bare_port_binds_loopback() {
        assert_eq!(bind_address("8080"), "127.0.0.1:8080");
        assert_eq!(bind_address("0.0.0.0:9"), "0.0.0.0:9");
        assert_eq!(bind_address("localhost:0"), "localhost:0");
    }
}
