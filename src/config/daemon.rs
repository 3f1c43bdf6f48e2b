//! `daemon:`: where `aimon-console daemon` also listens for consoles over TCP, and the TLS
//! certificate it shows them. Without `listen`, consoles reach it only through its Unix socket.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::context::Context;
use super::error::ConfigErrorKind;
use super::values::relative_to;

/// The `daemon:` section.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DaemonConfig {
    /// `listen`: `HOST:PORT` (or a bare port on loopback) where consoles also attach over TCP,
    /// with TLS and the daemon's token; `None`: the Unix socket only.
    pub listen: Option<String>,
    /// `tls_cert`: the certificate chain (PEM) shown to consoles; required with `listen`.
    pub tls_cert: Option<PathBuf>,
    /// `tls_key`: its private key (PEM); required with `listen`.
    pub tls_key: Option<PathBuf>,
}

/// The raw `daemon:` section.
#[derive(Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `listen`, `tls_cert` and `tls_key`"
)]
pub(super) struct RawDaemon {
    #[serde(default)]
    listen: Option<String>,
    #[serde(default)]
    tls_cert: Option<String>,
    #[serde(default)]
    tls_key: Option<String>,
}

/// The `daemon:` section, checked: `listen` goes with both TLS files, and they with it.
pub(super) fn daemon(cx: &Context, raw: Option<RawDaemon>, base: &Path) -> DaemonConfig {
    let raw = raw.unwrap_or_default();
    let text = |node: &str, value: Option<String>| value.and_then(|v| cx.keep(cx.expand(node, &v)));
    let listen = text("daemon.listen", raw.listen);
    let path = |node: &str, value| text(node, value).map(|p| relative_to(base, Path::new(&p)));
    let tls_cert = path("daemon.tls_cert", raw.tls_cert);
    let tls_key = path("daemon.tls_key", raw.tls_key);
    let missing = match (&listen, &tls_cert, &tls_key) {
        (Some(_), None, _) => Some((
            "daemon.listen",
            "daemon.listen needs tls_cert and tls_key: consoles attach over TCP with TLS only",
        )),
        (Some(_), _, None) => Some((
            "daemon.listen",
            "daemon.listen needs tls_cert and tls_key: consoles attach over TCP with TLS only",
        )),
        (None, Some(_), _) => Some((
            "daemon.tls_cert",
            "daemon.tls_cert is for daemon.listen, which is not set",
        )),
        (None, _, Some(_)) => Some((
            "daemon.tls_key",
            "daemon.tls_key is for daemon.listen, which is not set",
        )),
        _ => None,
    };
    if let Some((node, message)) = missing {
        cx.report(cx.error(ConfigErrorKind::Invalid, node, message.to_string()));
    }
    DaemonConfig {
        listen,
        tls_cert,
        tls_key,
    }
}
