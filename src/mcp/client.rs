//! The MCP client: the handshake (both eras), `tools/list` over all pages, and `tools/call`
//! with a deadline and cancellation, each request bounded (DESIGN §4.5–6).
//!
//! `McpClient` is the narrow interface `McpTool` and the manager use; `DefaultMcpClient` is the
//! rmcp-backed implementation. Resources and prompts get interfaces of their own later, so this
//! one does not grow (DESIGN §3).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    ElicitationSchema, ErrorData, FormElicitationCapability, Implementation, JsonObject,
    ListToolsRequest, PaginatedRequestParams, ProtocolVersion, ServerResult,
};
use rmcp::service::ClientInitializeError;
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, Peer, PeerRequestOptions, RequestContext, RoleClient,
    RunningService, ServiceError,
};
use rmcp::transport::Transport;
use rmcp::ClientHandler;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::transport::ended::Ended;
use super::transport::lines::StdoutIssues;
use super::transport::process::{ExitInfo, ServerProcess};

/// Most pages of `tools/list` followed before giving up (a server looping on cursors).
const MAX_TOOL_PAGES: usize = 1_000;
/// How long a clean exit may take after stdin closes before the group is signalled.
const CLOSE_GRACE: Duration = Duration::from_millis(500);
/// After a lost connection, how long to wait for the process to be seen exiting.
const EXIT_SETTLE: Duration = Duration::from_millis(300);

/// Why an MCP request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    #[error("server {server} is disconnected")]
    Disconnected { server: String },
    #[error("no answer within {}", crate::text::fmt_duration(*.0))]
    Timeout(Duration),
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
    fn from_service(server: &str, err: ServiceError) -> Self {
        match err {
            ServiceError::McpError(data) => McpError::Server {
                code: data.code.0,
                message: crate::text::sanitize_line(&data.message, 500),
            },
            ServiceError::TransportClosed => McpError::Disconnected {
                server: server.to_string(),
            },
            // The inner error: the wrapper's message names rmcp's transport types.
            ServiceError::TransportSend(e) => {
                McpError::Transport(crate::text::sanitize_line(&e.error.to_string(), 500))
            }
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
    /// One `tools/call` under the request deadline; `cancel` sends `notifications/cancelled`.
    async fn call_tool(
        &self,
        tool: &str,
        arguments: JsonObject,
        cancel: CancellationToken,
    ) -> Result<CallToolResult, McpError>;
    /// Closes the connection and ends the server (its whole process group for stdio).
    async fn close(&self) -> Result<(), McpError>;
}

/// How a client answers `elicitation/create`. The console's own elicitation UI comes later;
/// until then it declines (the server carries on without the input).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ElicitationPolicy {
    /// Decline every request.
    #[default]
    Decline,
    /// Accept form requests with the requested schema's defaults (the conformance client).
    AcceptDefaults,
}

/// Which handshake a client runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Lifecycle {
    /// `server/discover` (2026-07-28) first, falling back to `initialize` (DESIGN §4.6).
    #[default]
    Auto,
    /// Only `initialize`, offering this protocol version (e.g. `2025-11-25`).
    Initialize(String),
}

/// What a client declares and how it behaves; the console uses the default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientOptions {
    pub lifecycle: Lifecycle,
    pub elicitation: ElicitationPolicy,
}

/// Our side of the MCP session: identity, the elicitation capability and its answers.
#[derive(Debug, Clone)]
pub struct AimonClientHandler {
    elicitation: ElicitationPolicy,
    protocol_version: ProtocolVersion,
}

impl Default for AimonClientHandler {
    fn default() -> Self {
        AimonClientHandler::new(&ClientOptions::default())
    }
}

impl AimonClientHandler {
    pub fn new(options: &ClientOptions) -> Self {
        let protocol_version = match &options.lifecycle {
            Lifecycle::Auto => ProtocolVersion::LATEST_WITH_INITIALIZE,
            Lifecycle::Initialize(version) => {
                serde_json::from_value(serde_json::Value::String(version.clone()))
                    .unwrap_or(ProtocolVersion::LATEST_WITH_INITIALIZE)
            }
        };
        AimonClientHandler {
            elicitation: options.elicitation,
            protocol_version,
        }
    }
}

impl ClientHandler for AimonClientHandler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        let mut config = ClientConfig::new(
            capabilities,
            Implementation::new("aimon-console", env!("CARGO_PKG_VERSION")),
        );
        config.protocol_version = self.protocol_version.clone();
        config
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        match (self.elicitation, request) {
            (
                ElicitationPolicy::AcceptDefaults,
                ElicitRequestParams::FormElicitationParams {
                    requested_schema, ..
                },
            ) => Ok(ElicitResult::new(ElicitationAction::Accept)
                .with_content(schema_defaults(&requested_schema))),
            (ElicitationPolicy::AcceptDefaults | ElicitationPolicy::Decline, _) => {
                Ok(ElicitResult::new(ElicitationAction::Decline))
            }
        }
    }
}

/// An object holding every property of `schema` that declares a `default`, set to it.
fn schema_defaults(schema: &ElicitationSchema) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    if let Ok(serde_json::Value::Object(schema)) = serde_json::to_value(schema) {
        if let Some(serde_json::Value::Object(properties)) = schema.get("properties") {
            for (name, property) in properties {
                if let Some(default) = property.get("default") {
                    out.insert(name.clone(), default.clone());
                }
            }
        }
    }
    serde_json::Value::Object(out)
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
    /// Cancelled once the connection is over: its input ended (the process exited, the stream
    /// closed), it was closed, or a request found the server unreachable.
    ended: CancellationToken,
}

impl DefaultMcpClient {
    /// Runs the handshake over `transport` under `timeout`: `server/discover` first (the
    /// 2026-07-28 era), falling back to `initialize` for servers that do not know it.
    pub async fn handshake<T>(
        server: &str,
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
        let transport = Ended::new(transport, ended.clone());
        let serve = AimonClientHandler::new(options).serve_with_lifecycle(transport, lifecycle);
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
            server: server.to_string(),
            peer,
            service: tokio::sync::Mutex::new(Some(service)),
            process,
            request_timeout,
            identity,
            stdout_issues,
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

    async fn request(
        &self,
        request: ClientRequest,
        cancel: Option<&CancellationToken>,
    ) -> Result<ServerResult, McpError> {
        if !self.is_connected() {
            return Err(self.disconnected());
        }
        let options = PeerRequestOptions::with_timeout(self.request_timeout);
        let handle = match self.peer.send_cancellable_request(request, options).await {
            Ok(handle) => handle,
            Err(e) => return Err(self.failed(e).await),
        };
        let Some(cancel) = cancel else {
            return match handle.await_response().await {
                Ok(result) => Ok(result),
                Err(e) => Err(self.failed(e).await),
            };
        };
        let peer = handle.peer.clone();
        let id = handle.id.clone();
        tokio::select! {
            result = handle.await_response() => match result {
                Ok(result) => Ok(result),
                Err(e) => Err(self.failed(e).await),
            },
            () = cancel.cancelled() => {
                let params = rmcp::model::CancelledNotificationParam::new(
                    Some(id),
                    Some("cancelled by the operator".into()),
                );
                let _ = peer.notify_cancelled(params).await;
                Err(McpError::Cancelled)
            }
        }
    }

    /// Our error for a failed request. A lost connection ends the client; a stdio server's
    /// exit status is awaited for a moment (its stdout may close just before its exit is seen)
    /// so that the message can say how the process ended.
    async fn failed(&self, err: ServiceError) -> McpError {
        if connection_lost(&err) {
            self.ended.cancel();
        }
        match McpError::from_service(&self.server, err) {
            McpError::Disconnected { .. } => {
                if let Some(process) = &self.process {
                    process.wait_exit(EXIT_SETTLE).await;
                }
                self.disconnected()
            }
            other => other,
        }
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
                .request(ClientRequest::ListToolsRequest(request), None)
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
    ) -> Result<CallToolResult, McpError> {
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = Some(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        match self.request(request, Some(&cancel)).await? {
            ServerResult::CallToolResult(result) => Ok(result),
            other => Err(McpError::Protocol(format!(
                "tools/call was answered with {}",
                result_kind(&other)
            ))),
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

fn result_kind(result: &ServerResult) -> String {
    serde_json::to_value(result)
        .ok()
        .and_then(|v| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()))
        .map(|keys| format!("a result with fields [{}]", keys.join(", ")))
        .unwrap_or_else(|| "an unexpected result".into())
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
