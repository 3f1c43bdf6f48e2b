//! The handshake of a client: the era (`server/discover` for a bounded share of the timeout,
//! then `initialize`; straight to `initialize` for a server remembered to need it), the whole
//! of it under the request timeout, and why it failed, in words and by kind.
//!
//! Separate from `client.rs`, which runs the requests of a connected client.

use std::sync::atomic::AtomicU8;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RoleClient};
use rmcp::transport::Transport;
use tokio_util::sync::CancellationToken;

use super::{AimonClientHandler, ClientOptions, DefaultMcpClient, ServerIdentity, StdoutIssues};
use crate::mcp::session::SessionLinks;
use crate::mcp::transport::discover::DiscoverGuard;
use crate::mcp::transport::ended::Ended;
use crate::mcp::transport::era::{discover_share, DiscoverProbe, Era};
use crate::mcp::transport::http;
use crate::mcp::transport::process::ServerProcess;

/// Why a handshake failed, before classification by the start sequence.
#[derive(Debug)]
pub enum HandshakeError {
    /// No answer within the request deadline.
    Timeout(Duration),
    /// The connection closed (or a write to it failed) before the handshake ended: the server
    /// may have died, which only its exit status can tell. `cause` keeps rmcp's error so that
    /// HTTP failures can be classified by type.
    Closed {
        message: String,
        cause: Box<ClientInitializeError>,
    },
    /// The server answered, with something we cannot use (a wrong id, an error, another
    /// message): it was alive, so an exit seen afterwards follows our closing its stdin.
    Failed {
        message: String,
        cause: Box<ClientInitializeError>,
    },
    /// The server answered, but the answer could not be read (too long, not UTF-8, not
    /// JSON-RPC): why, in words.
    Unreadable(String),
}

impl HandshakeError {
    /// What went wrong, in words (`None` for a timeout).
    pub fn message(&self) -> Option<&str> {
        match self {
            HandshakeError::Timeout(_) => None,
            HandshakeError::Closed { message, .. } | HandshakeError::Failed { message, .. } => {
                Some(message)
            }
            HandshakeError::Unreadable(why) => Some(why),
        }
    }

    /// The transport's own error inside a failed handshake (the legacy fallback's first).
    pub fn transport_error(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HandshakeError::Timeout(_) | HandshakeError::Unreadable(_) => None,
            HandshakeError::Closed { cause, .. } | HandshakeError::Failed { cause, .. } => {
                transport_error(cause)
            }
        }
    }
}

/// The transport's own error inside rmcp's (the legacy fallback's first).
fn transport_error(e: &ClientInitializeError) -> Option<&(dyn std::error::Error + 'static)> {
    match e {
        ClientInitializeError::TransportError { error, .. } => Some(error),
        ClientInitializeError::LegacyFallbackFailed { discover, fallback } => {
            transport_error(fallback).or_else(|| transport_error(discover))
        }
        _ => None,
    }
}

impl DefaultMcpClient {
    /// Runs the handshake over `transport` under `request_timeout`: `server/discover` first
    /// (the 2026-07-28 era) for a quarter of it, then `initialize` for servers that do not
    /// know it or stay silent; a server remembered (in `options`) to need `initialize` goes
    /// straight to it. `links` must be the session whose tap `transport` delivers to; `issues`
    /// is what the transport's reader fills (the stdio reader; empty for HTTP).
    pub async fn handshake<T>(
        links: SessionLinks,
        transport: T,
        process: Option<ServerProcess>,
        request_timeout: Duration,
        issues: Arc<Mutex<StdoutIssues>>,
        options: &ClientOptions,
    ) -> Result<DefaultMcpClient, (HandshakeError, Option<ServerProcess>)>
    where
        T: Transport<RoleClient> + 'static,
    {
        let server = links.server.clone();
        let memory = &options.eras;
        let (lifecycle, remembered) = match memory.get(&server) {
            Some(Era::Initialize) => (ClientLifecycleMode::Initialize, Some(memory)),
            remembered @ (Some(Era::Discover) | None) => (
                ClientLifecycleMode::Auto {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
                },
                remembered.map(|_| memory),
            ),
        };
        let ended = CancellationToken::new();
        // A server answering `server/discover` with something else still gets `initialize`
        // (the guard), and so does one that stays silent past its share (the probe).
        let transport = DiscoverProbe::new(
            Ended::new(DiscoverGuard::new(transport), ended.clone()),
            discover_share(request_timeout),
            issues.clone(),
        );
        let handler = AimonClientHandler::with_links(options, links.clone());
        let serve = handler.clone().serve_with_lifecycle(transport, lifecycle);
        let result = tokio::time::timeout(request_timeout, serve).await;
        if let (Err(_) | Ok(Err(_)), Some(memory)) = (&result, remembered) {
            // The remembered era did not work this time: find it anew next time.
            memory.forget(&server);
        }
        let service = match result {
            Err(_) => return Err((HandshakeError::Timeout(request_timeout), process)),
            Ok(Err(err)) => {
                let unreadable = issues
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take_any_failed();
                if let Some(why) = unreadable {
                    return Err((HandshakeError::Unreadable(why), process));
                }
                // An HTTP answer rmcp could not read (a body too large, not JSON-RPC).
                if let Some(why) = transport_error(&err).and_then(http::unreadable_answer) {
                    return Err((HandshakeError::Unreadable(why), process));
                }
                let message = describe_init_error(&err);
                let cause = Box::new(err);
                let err = if is_connection_loss(&cause) {
                    HandshakeError::Closed { message, cause }
                } else {
                    HandshakeError::Failed { message, cause }
                };
                return Err((err, process));
            }
            Ok(Ok(service)) => service,
        };
        let peer = service.peer().clone();
        // Timings and errors must be real: no cached answers (docs/ARCHITECTURE.md §4.6).
        peer.set_response_cache_config(rmcp::ClientCacheConfig::disabled())
            .await;
        let info = peer.peer_info();
        if let Some(info) = &info {
            let era = if info.protocol_version.has_initialize() {
                Era::Initialize
            } else {
                Era::Discover
            };
            memory.set(&server, era);
        }
        let identity = match info {
            Some(info) => ServerIdentity {
                protocol_version: info.protocol_version.to_string(),
                name: info
                    .server_info
                    .as_ref()
                    .map(|i| crate::text::sanitize_line(&i.name, 100))
                    .unwrap_or_default(),
                version: info
                    .server_info
                    .as_ref()
                    .map(|i| crate::text::sanitize_line(&i.version, 50))
                    .unwrap_or_default(),
            },
            None => ServerIdentity {
                protocol_version: String::new(),
                name: String::new(),
                version: String::new(),
            },
        };
        Ok(DefaultMcpClient {
            server,
            peer,
            service: tokio::sync::Mutex::new(Some(service)),
            process,
            request_timeout,
            identity,
            stdout_issues: issues,
            list_warnings: Mutex::default(),
            list_ttl: Mutex::default(),
            links,
            ended,
            log_level: AtomicU8::new(0),
            handler,
            direct: None,
        })
    }
}

/// Whether the handshake failed because the connection went away rather than on an answer.
fn is_connection_loss(err: &ClientInitializeError) -> bool {
    match err {
        ClientInitializeError::ConnectionClosed(_)
        | ClientInitializeError::TransportError { .. }
        | ClientInitializeError::Cancelled => true,
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => {
            is_connection_loss(fallback)
        }
        // Every other kind (rmcp's enum is non-exhaustive) is an answer we could not use.
        _ => false,
    }
}

/// Words for a failed handshake, without rmcp's debug dumps of whole messages.
fn describe_init_error(err: &ClientInitializeError) -> String {
    match err {
        ClientInitializeError::ConnectionClosed(_) => {
            "the server closed the connection during the handshake".into()
        }
        ClientInitializeError::JsonRpcError(data) => format!(
            "the server refused the handshake: {} (code {})",
            crate::text::sanitize_line(&data.message, 300),
            data.code.0
        ),
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => {
            describe_init_error(fallback)
        }
        ClientInitializeError::ExpectedInitResponse(_)
        | ClientInitializeError::ExpectedInitResult(_) => {
            "the server answered the handshake with something else".into()
        }
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => format!(
            "no protocol version in common (server supports {})",
            server_supported
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => crate::text::sanitize_line(&other.to_string(), 300),
    }
}
