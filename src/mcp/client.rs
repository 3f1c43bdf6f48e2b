//! The MCP client: the handshake (both eras), `tools/list` over all pages, and `tools/call`
//! with a deadline that progress pushes back, a total cap and cancellation, each request
//! bounded (DESIGN §4.5–6). What the client declares and answers is in `handler.rs`.
//!
//! `McpClient` is the narrow interface `McpTool` and the manager use; `DefaultMcpClient` is the
//! rmcp-backed implementation. Resources and prompts have interfaces of their own
//! (`resources.rs`, `prompts.rs`), so this one does not grow (DESIGN §3).

// Roots, sampling and logging are SEP-2577-deprecated in rmcp; the servers of today use them.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, JsonObject,
    ListToolsRequest, LoggingLevel, PaginatedRequestParams, ProtocolVersion, ServerResult,
    SetLevelRequest, SetLevelRequestParams,
};
use rmcp::service::ClientInitializeError;
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, Peer, PeerRequestOptions, RequestHandle, RoleClient,
    RunningService, ServiceError,
};
use rmcp::transport::Transport;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

pub use super::handler::{AimonClientHandler, ClientOptions, Lifecycle, SAMPLING_DECLINED};
use super::notify::LogLevel;
use super::session::SessionLinks;
use super::transport::discover::DiscoverGuard;
use super::transport::ended::Ended;
use super::transport::lines::StdoutIssues;
use super::transport::process::{ExitInfo, ServerProcess};
use crate::tool::ProgressSink;

/// Most pages of `tools/list` followed before giving up (a server looping on cursors).
const MAX_TOOL_PAGES: usize = 1_000;
/// How long a clean exit may take after stdin closes before the group is signalled.
const CLOSE_GRACE: Duration = Duration::from_millis(500);
/// Progress keeps a request alive past its idle deadline (`request_timeout`), but never past
/// this many times `request_timeout` in all.
pub const TOTAL_TIMEOUT_FACTOR: u32 = 10;
/// How long sending `notifications/cancelled` may hold up a call that already ended.
const CANCEL_SEND_LIMIT: Duration = Duration::from_millis(200);
/// After the connection dropped mid-request, how long to wait to learn the exit status.
const EXIT_SETTLE: Duration = Duration::from_millis(300);

/// Why an MCP request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    #[error("server {server} is disconnected")]
    Disconnected { server: String },
    #[error("no answer within {}", crate::text::fmt_duration(*.0))]
    Timeout(Duration),
    #[error("no answer within the total cap of {} (progress kept the request alive until then)", crate::text::fmt_duration(*.0))]
    TotalTimeout(Duration),
    #[error("cancelled")]
    Cancelled,
    #[error("server error {code}: {message}")]
    Server { code: i32, message: String },
    #[error("protocol error: {0}")]
    Protocol(String),
    #[error("transport error: {0}")]
    Transport(String),
}

impl McpError {
    pub(super) fn from_service(server: &str, err: ServiceError) -> Self {
        match err {
            ServiceError::McpError(data) => McpError::Server {
                code: data.code.0,
                message: crate::text::sanitize_line(&data.message, 500),
            },
            ServiceError::TransportClosed => McpError::Disconnected {
                server: server.to_string(),
            },
            // The inner error: the wrapper's message names rmcp's transport types.
            ServiceError::TransportSend(e) => McpError::Transport(
                // An OAuth verdict (a login needed, more scope) in words that say what to do.
                super::transport::http::auth_message(&*e.error, server)
                    .unwrap_or_else(|| crate::text::sanitize_line(&e.error.to_string(), 500)),
            ),
            ServiceError::Timeout { timeout } => McpError::Timeout(timeout),
            ServiceError::Cancelled { .. } => McpError::Cancelled,
            ServiceError::UnexpectedResponse => {
                McpError::Protocol("the server sent an unexpected response".into())
            }
            other => McpError::Protocol(other.to_string()),
        }
    }
}

/// What a server said about itself in the handshake.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerIdentity {
    pub protocol_version: String,
    pub name: String,
    pub version: String,
}

/// The narrow client interface: what `McpTool` and the manager need, and nothing more.
#[async_trait::async_trait]
pub trait McpClient: Send + Sync {
    /// The configured server name.
    fn server(&self) -> &str;
    /// False once the connection or the process is gone.
    fn is_connected(&self) -> bool;
    /// Every tool, following `nextCursor` over all pages; each page under the request deadline.
    async fn list_tools(&self) -> Result<Vec<rmcp::model::Tool>, McpError>;
    /// One `tools/call` under the request deadline, which each progress update pushes back
    /// (up to a total cap); progress goes to `progress`. Cancelling `cancel` sends
    /// `notifications/cancelled` and ends the call at once, whatever the server does.
    async fn call_tool(
        &self,
        tool: &str,
        arguments: JsonObject,
        cancel: CancellationToken,
        progress: ProgressSink,
    ) -> Result<CallToolResult, McpError>;
    /// Closes the connection and ends the server (its whole process group for stdio).
    async fn close(&self) -> Result<(), McpError>;
}

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
}

impl HandshakeError {
    /// What went wrong, in words (`None` for a timeout).
    pub fn message(&self) -> Option<&str> {
        match self {
            HandshakeError::Timeout(_) => None,
            HandshakeError::Closed { message, .. } | HandshakeError::Failed { message, .. } => {
                Some(message)
            }
        }
    }

    /// The transport's own error inside a failed handshake (the legacy fallback's first).
    pub fn transport_error(&self) -> Option<&(dyn std::error::Error + 'static)> {
        fn find(e: &ClientInitializeError) -> Option<&(dyn std::error::Error + 'static)> {
            match e {
                ClientInitializeError::TransportError { error, .. } => Some(error),
                ClientInitializeError::LegacyFallbackFailed { discover, fallback } => {
                    find(fallback).or_else(|| find(discover))
                }
                _ => None,
            }
        }
        match self {
            HandshakeError::Timeout(_) => None,
            HandshakeError::Closed { cause, .. } | HandshakeError::Failed { cause, .. } => {
                find(cause)
            }
        }
    }
}

/// The rmcp-backed client of one server.
pub struct DefaultMcpClient {
    server: String,
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, AimonClientHandler>>>,
    process: Option<ServerProcess>,
    request_timeout: Duration,
    identity: ServerIdentity,
    stdout_issues: Arc<Mutex<StdoutIssues>>,
    links: SessionLinks,
    /// Cancelled once the connection is over: its input ended (the process exited, the stream
    /// closed), it was closed, or a request found the server unreachable.
    ended: CancellationToken,
}

impl DefaultMcpClient {
    /// Runs the handshake over `transport` under `timeout`: `server/discover` first (the
    /// 2026-07-28 era), falling back to `initialize` for servers that do not know it. `links`
    /// must be the session whose tap `transport` delivers to.
    pub async fn handshake<T>(
        links: SessionLinks,
        transport: T,
        process: Option<ServerProcess>,
        request_timeout: Duration,
        stdout_issues: Arc<Mutex<StdoutIssues>>,
        options: &ClientOptions,
    ) -> Result<DefaultMcpClient, (HandshakeError, Option<ServerProcess>)>
    where
        T: Transport<RoleClient> + 'static,
    {
        let lifecycle = match &options.lifecycle {
            Lifecycle::Auto => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
            },
            Lifecycle::Initialize(_) => ClientLifecycleMode::Initialize,
        };
        let ended = CancellationToken::new();
        // A server answering `server/discover` with something else still gets `initialize`.
        let transport = Ended::new(DiscoverGuard::new(transport), ended.clone());
        let serve = AimonClientHandler::with_links(options, links.clone())
            .serve_with_lifecycle(transport, lifecycle);
        let service = match tokio::time::timeout(request_timeout, serve).await {
            Err(_) => return Err((HandshakeError::Timeout(request_timeout), process)),
            Ok(Err(err)) => {
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
        // Timings and errors must be real: no cached answers (DESIGN §4.6).
        peer.set_response_cache_config(rmcp::ClientCacheConfig::disabled())
            .await;
        let identity = match peer.peer_info() {
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
            server: links.server.clone(),
            peer,
            service: tokio::sync::Mutex::new(Some(service)),
            process,
            request_timeout,
            identity,
            stdout_issues,
            links,
            ended,
        })
    }

    /// Completes once the connection is over, whoever ended it (see `is_connected`). Owns
    /// what it waits on, so a watcher need not hold the client.
    pub fn ended_owned(&self) -> tokio_util::sync::WaitForCancellationFutureOwned {
        self.ended.clone().cancelled_owned()
    }

    pub fn identity(&self) -> &ServerIdentity {
        &self.identity
    }

    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// The process, for stdio servers.
    pub fn process(&self) -> Option<&ServerProcess> {
        self.process.as_ref()
    }

    /// How the process ended, if it has.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.process.as_ref().and_then(ServerProcess::exit_info)
    }

    /// Warnings about what the server wrote on stdout besides JSON-RPC.
    pub fn stdout_warnings(&self) -> Vec<String> {
        self.stdout_issues
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .warnings()
    }

    /// This session's live state (progress routes, the tools-stale flag).
    pub fn links(&self) -> &SessionLinks {
        &self.links
    }

    /// rmcp's peer: what the server said in the handshake, and `subscriptions/listen`.
    pub(super) fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// Asks the server to send log messages at `level` and above (`logging/setLevel`).
    pub async fn set_log_level(&self, level: LogLevel) -> Result<(), McpError> {
        let level = match level {
            LogLevel::Debug => LoggingLevel::Debug,
            LogLevel::Info => LoggingLevel::Info,
            LogLevel::Notice => LoggingLevel::Notice,
            LogLevel::Warning => LoggingLevel::Warning,
            LogLevel::Error => LoggingLevel::Error,
            LogLevel::Critical => LoggingLevel::Critical,
            LogLevel::Alert => LoggingLevel::Alert,
            LogLevel::Emergency => LoggingLevel::Emergency,
        };
        let request =
            ClientRequest::SetLevelRequest(SetLevelRequest::new(SetLevelRequestParams::new(level)));
        self.request(request, None, ProgressSink::none())
            .await
            .map(|_| ())
    }

    /// One request. Its deadline is `request_timeout` of silence: every progress update for
    /// its token (routed by the session tap, in wire order) pushes it back, up to
    /// `TOTAL_TIMEOUT_FACTOR` × `request_timeout` in all. Cancelling `cancel`, or a deadline,
    /// sends `notifications/cancelled` and ends the request at once, whether or not the
    /// server ever answers. Resources and prompts (`resources.rs`, `prompts.rs`) go this way too.
    pub(super) async fn request(
        &self,
        request: ClientRequest,
        cancel: Option<&CancellationToken>,
        progress: ProgressSink,
    ) -> Result<ServerResult, McpError> {
        if !self.is_connected() {
            return Err(self.disconnected());
        }
        // No rmcp timeout: the deadlines are kept below, against our own progress routes.
        let handle = self
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| self.map_err(e))?;
        let RequestHandle {
            rx,
            id,
            progress_token,
            ..
        } = handle;
        let token = serde_json::to_value(&progress_token).unwrap_or_default();
        let route = self.links.routes.register(&token, progress);
        let idle = self.request_timeout;
        let cap = idle.saturating_mul(TOTAL_TIMEOUT_FACTOR);
        let started = tokio::time::Instant::now();
        let total_at = started + cap;
        let deadline = tokio::time::sleep_until((started + idle).min(total_at));
        tokio::pin!(rx, deadline);
        let outcome = loop {
            tokio::select! {
                biased;
                answer = &mut rx => break match answer {
                    Ok(result) => result.map_err(|e| self.map_err(e)),
                    // The service ended without answering: the connection is gone.
                    Err(_) => {
                        self.ended.cancel();
                        Err(self.disconnected())
                    }
                },
                () = cancel_or_never(cancel) => {
                    self.send_cancelled(id, "cancelled by the operator").await;
                    break Err(McpError::Cancelled);
                }
                () = route.progressed() => {
                    let next = tokio::time::Instant::now() + idle;
                    deadline.as_mut().reset(next.min(total_at));
                }
                () = &mut deadline => {
                    let (reason, err) = if tokio::time::Instant::now() >= total_at {
                        ("maximum total time exceeded", McpError::TotalTimeout(cap))
                    } else {
                        ("request timeout", McpError::Timeout(idle))
                    };
                    self.send_cancelled(id, reason).await;
                    break Err(err);
                }
            }
        };
        drop(route);
        match outcome {
            // The connection dropped mid-request: say how the process ended, if it did.
            Err(McpError::Disconnected { .. }) => {
                if let Some(process) = &self.process {
                    process.wait_exit(EXIT_SETTLE).await;
                }
                Err(self.disconnected())
            }
            other => other,
        }
    }

    /// Tells the server to stop working on request `id`; never holds the caller up for long
    /// (a server that stopped reading its stdin must not keep a cancelled call alive).
    async fn send_cancelled(&self, id: rmcp::model::RequestId, reason: &str) {
        let params = rmcp::model::CancelledNotificationParam::new(Some(id), Some(reason.into()));
        let send = self.peer.notify_cancelled(params);
        if tokio::time::timeout(CANCEL_SEND_LIMIT, send).await.is_err() {
            tracing::debug!(server = %self.server, "notifications/cancelled not sent in time");
        }
    }

    /// Our error for a failed request; a lost connection (see `connection_lost`) ends the client
    /// and is said as such, also when an HTTP server could not be reached: reqwest's words for
    /// that ("error sending request for url …") do not say the server is gone.
    fn map_err(&self, err: ServiceError) -> McpError {
        if connection_lost(&err) {
            self.ended.cancel();
            return self.disconnected();
        }
        McpError::from_service(&self.server, err)
    }

    fn disconnected(&self) -> McpError {
        McpError::Disconnected {
            server: match self.exit_info() {
                Some(info) => format!("{} ({info})", self.server),
                None => self.server.clone(),
            },
        }
    }
}

#[async_trait::async_trait]
impl McpClient for DefaultMcpClient {
    fn server(&self) -> &str {
        &self.server
    }

    fn is_connected(&self) -> bool {
        !self.ended.is_cancelled() && !self.peer.is_transport_closed() && self.exit_info().is_none()
    }

    async fn list_tools(&self) -> Result<Vec<rmcp::model::Tool>, McpError> {
        // A `tools/list_changed` from now on means this listing may be out of date already.
        self.links.take_tools_stale();
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_TOOL_PAGES {
            let request = match cursor.take() {
                None => ListToolsRequest::default(),
                Some(c) => {
                    let mut params = PaginatedRequestParams::default();
                    params.cursor = Some(c);
                    ListToolsRequest::with_param(params)
                }
            };
            match self
                .request(
                    ClientRequest::ListToolsRequest(request),
                    None,
                    ProgressSink::none(),
                )
                .await?
            {
                ServerResult::ListToolsResult(page) => {
                    tools.extend(page.tools);
                    match page.next_cursor {
                        Some(next) if !next.is_empty() => cursor = Some(next),
                        _ => return Ok(tools),
                    }
                }
                _ => {
                    return Err(McpError::Protocol(
                        "tools/list was answered with something other than a tool list".into(),
                    ));
                }
            }
        }
        Err(McpError::Protocol(format!(
            "tools/list did not end after {MAX_TOOL_PAGES} pages"
        )))
    }

    async fn call_tool(
        &self,
        tool: &str,
        arguments: JsonObject,
        cancel: CancellationToken,
        progress: ProgressSink,
    ) -> Result<CallToolResult, McpError> {
        let mut params = CallToolRequestParams::new(tool.to_string());
        // Kept for a tool that turns out to run only as a task (`tasks.rs`).
        params.arguments = Some(arguments.clone());
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        match self.request(request, Some(&cancel), progress.clone()).await {
            Ok(ServerResult::CallToolResult(result)) if Self::task_required_result(&result) => {
                self.call_as_task(tool, arguments, cancel, progress).await
            }
            Err(e) if Self::task_required_error(&e) => {
                self.call_as_task(tool, arguments, cancel, progress).await
            }
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(other) => Err(McpError::Protocol(format!(
                "tools/call was answered with {}",
                result_kind(&other)
            ))),
            Err(e) => Err(e),
        }
    }

    async fn close(&self) -> Result<(), McpError> {
        let service = self.service.lock().await.take();
        let mut outcome = Ok(());
        if let Some(mut service) = service {
            match service.close_with_timeout(CLOSE_GRACE).await {
                Ok(_) => {}
                Err(e) => outcome = Err(McpError::Transport(e.to_string())),
            }
        }
        if let Some(process) = &self.process {
            process.shutdown(CLOSE_GRACE).await;
        }
        outcome
    }
}

/// Resolves when `cancel` is cancelled; never without one.
async fn cancel_or_never(cancel: Option<&CancellationToken>) {
    match cancel {
        Some(cancel) => cancel.cancelled().await,
        None => std::future::pending().await,
    }
}

fn result_kind(result: &ServerResult) -> String {
    serde_json::to_value(result)
        .ok()
        .and_then(|v| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()))
        .map(|keys| format!("a result with fields [{}]", keys.join(", ")))
        .unwrap_or_else(|| "an unexpected result".into())
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

/// Whether a failed request means the connection is gone: it closed, or (Streamable HTTP, which
/// holds no connection open to notice with) the server could not be reached at all. A slow or
/// erring server is not gone: timeouts and error answers do not count.
fn connection_lost(err: &ServiceError) -> bool {
    match err {
        ServiceError::TransportClosed => true,
        ServiceError::TransportSend(e) => super::transport::http::server_gone(&*e.error),
        _ => false,
    }
}
