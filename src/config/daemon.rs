//! `daemon:`: where `aimon-console daemon` also listens for consoles over TCP, and the TLS
//! certificate it shows them (without `listen`, consoles reach it only through its Unix
//! socket); and how many agent sessions it holds at once.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::context::Context;
use super::error::ConfigErrorKind;
use super::values::relative_to;

/// The default of `daemon.sessions`.
pub const DEFAULT_SESSIONS: usize = 32;

/// The `daemon:` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaemonConfig {
    /// `listen`: `HOST:PORT` (or a bare port on loopback) where consoles also attach over TCP,
    /// with TLS and the daemon's token; `None`: the Unix socket only.
    pub listen: Option<String>,
    /// `tls_cert`: the certificate chain (PEM) shown to consoles; required with `listen`.
    pub tls_cert: Option<PathBuf>,
    /// `tls_key`: its private key (PEM); required with `listen`.
    pub tls_key: Option<PathBuf>,
    /// `sessions`: the most agent sessions the daemon holds at once (each with its whole
    /// conversation); past it, the idle one used longest ago is let go, to be read back from
    /// its transcript when a prompt names it.
    pub sessions: usize,
}

impl Default for DaemonConfig {
    fn default() -> DaemonConfig {
        DaemonConfig {
            listen: None,
            tls_cert: None,
            tls_key: None,
            sessions: DEFAULT_SESSIONS,
        }
    }
}

/// The raw `daemon:` section.
#[derive(Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `listen`, `tls_cert`, `tls_key` and `sessions`"
)]
pub(super) struct RawDaemon {
    #[serde(default)]
    listen: Option<String>,
    #[serde(default)]
    tls_cert: Option<String>,
    #[serde(default)]
    tls_key: Option<String>,
    #[serde(default)]
    sessions: Option<u64>,
}

/// The `daemon:` section, checked: `listen` goes with both TLS files, and they with it;
/// `sessions` is at least 1.
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
    let sessions = match raw.sessions {
        None => DEFAULT_SESSIONS,
        Some(0) => {
            cx.report(cx.error(
                ConfigErrorKind::Invalid,
                "daemon.sessions",
                "daemon.sessions: must be at least 1".to_string(),
            ));
            DEFAULT_SESSIONS
        }
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
    };
    DaemonConfig {
        listen,
        tls_cert,
        tls_key,
        sessions,
    }
}
