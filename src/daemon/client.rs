//! The console's end of the operator API (docs/daemon.md): a connection to a daemon over its
//! Unix socket, or over TCP with TLS and its token; `initialize` sent, requests answered by
//! id, and the daemon's notifications handed on in order. `attach` (tui/attached/) is built on
//! it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::{mpsc, oneshot};

use super::wire::PROTOCOL_VERSION;

/// Notifications waiting for the console at most: past it the link stops reading, and the
/// daemon's own bound (its queue for this console) drops and counts the rest.
const NOTICES: usize = 4_096;

/// A request's answer: its result, or the daemon's error code and message.
pub type Answer = Result<Value, (i64, String)>;

/// Code of an answer the daemon never gave (the connection ended first).
pub const GONE: i64 = -1;

type Pending = Arc<Mutex<Option<HashMap<u64, oneshot::Sender<Answer>>>>>;

/// Where a daemon is.
#[derive(Debug, Clone)]
pub enum Target {
    /// Its Unix socket.
    Unix(PathBuf),
    /// `tls://HOST:PORT` (`daemon.listen`): its certificate checked against `ca` (a PEM file)
    /// or else the system's roots, its `token` brought in `initialize`.
    Tls {
        host: String,
        port: u16,
        ca: Option<PathBuf>,
        token: String,
    },
}

impl Target {
    /// `tls://HOST:PORT`, else the path of a socket.
    pub fn parse(text: &str, ca: Option<PathBuf>, token: Option<String>) -> Result<Target, String> {
        let Some(rest) = text.strip_prefix("tls://") else {
            return Ok(Target::Unix(PathBuf::from(text)));
        };
        let (host, port) = rest
            .rsplit_once(':')
            .and_then(|(h, p)| Some((h.trim_matches(['[', ']']), p.parse::<u16>().ok()?)))
            .ok_or_else(|| format!("{text}: a daemon over TCP is tls://HOST:PORT"))?;
        let token = token.ok_or_else(|| {
            format!("{text}: over TCP the daemon wants its token (AIMON_DAEMON_TOKEN, or --token-file; `aimon-console daemon --print-token` on its machine prints it)")
        })?;
        Ok(Target::Tls {
            host: host.to_string(),
            port,
            ca,
            token,
        })
    }

    fn text(&self) -> String {
        match self {
            Target::Unix(path) => path.display().to_string(),
            Target::Tls { host, port, .. } => format!("tls://{host}:{port}"),
        }
    }
}

type Reader = Box<dyn AsyncRead + Send + Unpin>;
type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// The TLS setup for a daemon: its certificate trusted from `ca`, or the system's roots.
fn tls_config(ca: Option<&Path>) -> Result<rustls::ClientConfig, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls_platform_verifier::ConfigVerifierExt;
    crate::net::install_tls_provider();
    let Some(ca) = ca else {
        return rustls::ClientConfig::with_platform_verifier()
            .map_err(|e| format!("the system's certificate roots: {e}"));
    };
    let mut roots = rustls::RootCertStore::empty();
    let certs = rustls::pki_types::CertificateDer::pem_file_iter(ca)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("--ca {}: {e}", ca.display()))?;
    roots.add_parsable_certificates(certs);
    if roots.is_empty() {
        return Err(format!("--ca {}: no certificate in it", ca.display()));
    }
    Ok(rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// The connection's two halves.
async fn open(target: &Target) -> Result<(Reader, Writer), String> {
    let unreachable = |e: &dyn std::fmt::Display| {
        format!(
            "cannot reach a daemon at {}: {e} (start one with `aimon-console daemon`)",
            target.text()
        )
    };
    match target {
        Target::Unix(path) => {
            let (read, write) = UnixStream::connect(path)
                .await
                .map_err(|e| unreachable(&e))?
                .into_split();
            Ok((Box::new(read), Box::new(write)))
        }
        Target::Tls { host, port, ca, .. } => {
            let config = tls_config(ca.as_deref())?;
            let name = rustls::pki_types::ServerName::try_from(host.clone())
                .map_err(|e| format!("{}: {e}", target.text()))?;
            let tcp = TcpStream::connect((host.as_str(), *port))
                .await
                .map_err(|e| unreachable(&e))?;
            let _ = tcp.set_nodelay(true);
            let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
                .connect(name, tcp)
                .await
                .map_err(|e| format!("{}: the TLS handshake failed: {e}", target.text()))?;
            let (read, write) = tokio::io::split(tls);
            Ok((Box::new(read), Box::new(write)))
        }
    }
}

/// One connection to a daemon.
pub struct Link {
    /// Where it is, for the operator (the socket's path, or `tls://HOST:PORT`).
    pub address: String,
    /// The daemon's answer to `initialize`: itself, this console as others see it, the
    /// servers, tools, waiting approvals and recent messages.
    pub hello: Value,
    lines: mpsc::Sender<String>,
    pending: Pending,
    next: AtomicU64,
}

/// One notification from the daemon: its method and params.
#[derive(Debug, Clone)]
pub struct Notice {
    pub method: String,
    pub params: Value,
}

/// Who this console says it is in `initialize`.
fn client_info(name: &str) -> Value {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| format!("uid{uid}"));
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "?".into());
    json!({"name": name, "user": user, "host": host})
}

impl Link {
    /// Connects to the daemon at `target` as console `name` and initializes; returns the link
    /// and its notifications (closed when the connection ends).
    pub async fn connect(
        target: &Target,
        name: &str,
    ) -> Result<(Arc<Link>, mpsc::Receiver<Notice>), String> {
        let (read, mut write) = open(target).await?;
        let (lines, mut lines_rx) = mpsc::channel::<String>(64);
        tokio::spawn(async move {
            while let Some(line) = lines_rx.recv().await {
                if write.write_all(line.as_bytes()).await.is_err() {
                    break;
                }
            }
        });
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));
        let (notices, notices_rx) = mpsc::channel(NOTICES);
        tokio::spawn(read_loop(BufReader::new(read), pending.clone(), notices));
        let mut link = Link {
            address: target.text(),
            hello: Value::Null,
            lines,
            pending,
            next: AtomicU64::new(1),
        };
        let mut params = json!({"protocol_version": PROTOCOL_VERSION, "client": client_info(name)});
        if let Target::Tls { token, .. } = target {
            params["token"] = json!(token);
        }
        link.hello = link
            .request("initialize", params)
            .await
            .map_err(|(_, message)| format!("the daemon at {} refused: {message}", link.address))?;
        Ok((Arc::new(link), notices_rx))
    }

    /// The default socket (`$XDG_RUNTIME_DIR/aimon-console/daemon.sock`).
    pub fn default_socket() -> PathBuf {
        super::socket::default_path()
    }

    /// Sends `method` and waits for its answer.
    pub async fn request(&self, method: &str, params: Value) -> Answer {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            match pending.as_mut() {
                Some(map) => map.insert(id, tx),
                None => return Err((GONE, "the daemon went away".into())),
            };
        }
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if self.lines.send(format!("{message}\n")).await.is_err() {
            return Err((GONE, "the daemon went away".into()));
        }
        rx.await
            .unwrap_or_else(|_| Err((GONE, "the daemon went away".into())))
    }

    /// This console as the daemon shows it to others (`you.text`).
    pub fn you(&self) -> &str {
        self.hello["you"]["text"].as_str().unwrap_or("")
    }
}

/// Reads the daemon's lines (of any length) until the connection ends: answers to their
/// requests, notifications to `notices`. At the end every request still waiting is told.
async fn read_loop(mut read: BufReader<Reader>, pending: Pending, notices: mpsc::Sender<Notice>) {
    let mut line = String::new();
    loop {
        line.clear();
        match read.read_line(&mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // Taken apart, not cloned from: an event's params are most of its line.
        let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(&line) else {
            tracing::warn!("the daemon sent a line that is not a JSON object");
            continue;
        };
        if let Some(Value::String(method)) = message.remove("method") {
            let notice = Notice {
                method,
                params: message.remove("params").unwrap_or(Value::Null),
            };
            if notices.send(notice).await.is_err() {
                break;
            }
            continue;
        }
        let Some(id) = message.get("id").and_then(Value::as_u64) else {
            continue;
        };
        let answer = match message.get("error") {
            Some(error) => Err((
                error.get("code").and_then(Value::as_i64).unwrap_or(0),
                error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            )),
            None => Ok(message.remove("result").unwrap_or(Value::Null)),
        };
        let waiting = pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .and_then(|m| m.remove(&id));
        if let Some(waiting) = waiting {
            let _ = waiting.send(answer);
        }
    }
    // Dropping the senders tells every request still waiting that no answer comes.
    pending.lock().unwrap_or_else(|e| e.into_inner()).take();
}
