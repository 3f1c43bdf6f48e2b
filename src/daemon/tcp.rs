//! The daemon over TCP (`daemon.listen`): TLS only, with the certificate and key the config
//! names, and the daemon's token in every console's `initialize` (docs/daemon.md).

use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::config::DaemonConfig;

/// How long a connection has to finish its TLS handshake.
pub const HANDSHAKE: Duration = Duration::from_secs(10);

/// The TCP side: its listener, its TLS, the address it listens on and the token consoles
/// bring (made, if it was not there, before anyone is told the daemon listens).
pub struct Tcp {
    pub listener: TcpListener,
    pub tls: TlsAcceptor,
    pub addr: std::net::SocketAddr,
    pub token: String,
}

/// Listens where `config` says, if it says; an error names what could not be read or bound.
pub async fn listen(config: &DaemonConfig) -> Result<Option<Tcp>, String> {
    let (Some(listen), Some(cert), Some(key)) = (&config.listen, &config.tls_cert, &config.tls_key)
    else {
        return Ok(None);
    };
    crate::net::install_tls_provider();
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<_, _>>())
        .map_err(|e| format!("daemon.tls_cert {}: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!(
            "daemon.tls_cert {}: no certificate in it",
            cert.display()
        ));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("daemon.tls_key {}: {e}", key.display()))?;
    let tls = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("daemon.tls_cert and tls_key: {e}"))?;
    let addr = crate::net::bind_address(listen);
    let listener = TcpListener::bind(&addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let token = crate::runtime::daemon_token().map_err(|e| format!("no daemon token: {e}"))?;
    Ok(Some(Tcp {
        listener,
        tls: TlsAcceptor::from(Arc::new(tls)),
        addr,
        token,
    }))
}

/// Whether `given` is `token`, in time that does not depend on where they differ.
pub fn token_matches(given: &str, token: &str) -> bool {
    let (a, b) = (given.as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
