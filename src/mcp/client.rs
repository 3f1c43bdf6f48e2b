//! The MCP client: `tools/list` over all pages (bad and duplicate entries skipped and named), and
//! `tools/call` with a deadline that progress pushes back, a total cap and cancellation, each
//! request bounded and failed at once when its answer cannot be read (docs/ARCHITECTURE.md §4.5–8).
//! The handshake (both eras) is in `client/handshake.rs`; what the client declares and answers is
//! in `handler.rs`.
//!
//! `McpClient` is the narrow interface `McpTool` and the manager use; `DefaultMcpClient` is the
//! rmcp-backed implementation. Resources and prompts have interfaces of their own
//! (`resources.rs`, `prompts.rs`), so this one does not grow (docs/ARCHITECTURE.md §3).

// Roots, sampling and logging are SEP-2577-deprecated in rmcp; the servers of today use them.
#![allow(deprecated)]

mod direct;
mod error;
mod handshake;
mod listing;
mod mrtr;

pub(crate) use mrtr::Retried;

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, JsonObject,
    ListToolsRequest, PaginatedRequestParams, RequestId, ServerResult, SetLevelRequest,
    SetLevelRequestParams,
};
use rmcp::service::{
    Peer, PeerRequestOptions, RequestHandle, RoleClient, RunningService, ServiceError,
};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

pub use super::handler::{AimonClientHandler, ClientOptions};
use super::listed::ListedTool;
use super::notify::LogLevel;
use super::session::SessionLinks;
use super::transport::direct::Reply;
use super::transport::lines::StdoutIssues;
use super::transport::outbound::SessionMeta;
use super::transport::process::{ExitInfo, ServerProcess};
use super::transport::reaper;
use super::transport::tool_page::PageEntries;
use crate::tool::ProgressSink;
use direct::Direct;
pub use error::McpError;
use error::{connection_lost, http_answer_error};
pub use handshake::HandshakeError;
use listing::Listing;

/// Most pages of `tools/list` followed before giving up (a server looping on cursors).
const MAX_TOOL_PAGES: usize = 1_000;
/// How long a clean exit may take after stdin closes before the group is signalled.
const CLOSE_GRACE: Duration = Duration::from_millis(500);
/// Progress keeps a request alive past its idle deadline (`request_timeout`), but never past
/// this many times `request_timeout` in all.
pub const TOTAL_TIMEOUT_FACTOR: u32 = 10;
/// How long sending `notifications/cancelled` may hold up a call that already ended.
const CANCEL_SEND_LIMIT: Duration = Duration::from_millis(200);
/// The first protocol revision whose log messages are asked for per request (the request's
/// `_meta` carries `io.modelcontextprotocol/logLevel`), not by `logging/setLevel`.
const PER_REQUEST_LOGS: &str = "2026-07-28";
/// After the connection dropped mid-request, how long to wait to learn the exit status.
const EXIT_SETTLE: Duration = Duration::from_millis(300);

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
    async fn list_tools(&self) -> Result<Vec<ListedTool>, McpError>;
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

/// The rmcp-backed client of one server.
pub struct DefaultMcpClient {
    server: String,
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, AimonClientHandler>>>,
    process: Option<ServerProcess>,
    request_timeout: Duration,
    identity: ServerIdentity,
    stdout_issues: Arc<Mutex<StdoutIssues>>,
    /// What the last `tools/list` skipped (malformed entries, duplicate names), in words.
    list_warnings: Mutex<Vec<String>>,
    /// How long the last `tools/list` stays fresh, as the server said (`ttlMs`, the shortest
    /// of its pages); `None`: it did not say.
    list_ttl: Mutex<Option<Duration>>,
    links: SessionLinks,
    /// Cancelled once the connection is over: its input ended (the process exited, the stream
    /// closed), it was closed, or a request found the server unreachable.
    ended: CancellationToken,
    /// The least severe log level asked for on a 2026-07-28 session, as an index of
    /// [`LogLevel::ALL`]: that revision has no `logging/setLevel`, and a server may log only for
    /// requests that carry a level. Every level until the operator picks one (the older
    /// revisions' default too).
    log_level: AtomicU8,
    /// The session's own handler, which also answers what a 2026-07-28 server asks inside an
    /// `input_required` result (`mrtr.rs`).
    pub(super) handler: AimonClientHandler,
    /// `tools/call` written and answered without rmcp's service task (`transport/direct.rs`),
    /// with the `_meta` rmcp would give it: over stdio, and over Streamable HTTP from revision
    /// 2026-07-28 on (`client/direct.rs`).
    direct: Option<(Direct, SessionMeta)>,
}

impl DefaultMcpClient {
    /// The tree its process leads and the mark it carries (see `ServerProcess::tree`); `None`
    /// for a remote server.
    pub fn process_tree(&self) -> Option<(Option<i32>, String)> {
        let (leader, mark) = self.process.as_ref()?.tree();
        Some((leader, mark.to_string()))
    }

    /// Closes the session and ends its process group, leaving the descendants that escaped
    /// the group to the caller ([`McpClient::close`] handles them itself; closing every
    /// server, the manager walks them all at once).
    pub async fn end(&self) -> Result<(), McpError> {
        let service = self.service.lock().await.take();
        let mut outcome = Ok(());
        if let Some(mut service) = service {
            if let Err(e) = service.close_with_timeout(CLOSE_GRACE).await {
                outcome = Err(McpError::Transport(e.to_string()));
            }
        }
        if let Some(process) = &self.process {
            process.end_group(CLOSE_GRACE).await;
        }
        outcome
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

    /// How long the last listing of the tools stays fresh, as the server said (`ttlMs`).
    pub fn tools_ttl(&self) -> Option<Duration> {
        *self.list_ttl.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Warnings for the server's report: what it wrote on stdout besides JSON-RPC, answers
    /// that could not be read, and the tool entries its last `tools/list` skipped.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = self
            .stdout_issues
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .warnings();
        warnings.extend(
            self.list_warnings
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned(),
        );
        warnings
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
    /// On a 2026-07-28 session the level also goes in every request's `_meta` from now on, and
    /// a server that no longer knows `logging/setLevel` (that revision has none) is not wrong.
    pub async fn set_log_level(&self, level: LogLevel) -> Result<(), McpError> {
        let per_request = self.identity.protocol_version.as_str() >= PER_REQUEST_LOGS;
        if per_request {
            let index = LogLevel::ALL.iter().position(|l| *l == level).unwrap_or(0);
            self.log_level.store(index as u8, Ordering::Relaxed);
        }
        let request = ClientRequest::SetLevelRequest(SetLevelRequest::new(
            SetLevelRequestParams::new(level.to_rmcp()),
        ));
        match self.request(request, None, ProgressSink::none()).await {
            Err(McpError::Server { code: -32601, .. }) if per_request => Ok(()),
            outcome => outcome.map(|_| ()),
        }
    }

    /// One page of `tools/list`, and the entries the reader skipped from it.
    async fn list_page(
        &self,
        cursor: Option<String>,
    ) -> Result<(ServerResult, Option<PageEntries>), McpError> {
        let request = match cursor {
            None => ListToolsRequest::default(),
            Some(c) => {
                let mut params = PaginatedRequestParams::default();
                params.cursor = Some(c);
                ListToolsRequest::with_param(params)
            }
        };
        let (result, id) = self
            .request_with_id(
                &ClientRequest::ListToolsRequest(request),
                None,
                ProgressSink::none(),
            )
            .await?;
        let entries = self
            .stdout_issues
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take_tool_page(&id);
        Ok((result, entries))
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
        self.request_with_id(&request, cancel, progress)
            .await
            .map(|(result, _)| result)
    }

    /// [`request`](Self::request), with the id the request went under. Borrowed: a call
    /// written the direct way is serialized from it (rmcp's way sends a copy).
    async fn request_with_id(
        &self,
        request: &ClientRequest,
        cancel: Option<&CancellationToken>,
        progress: ProgressSink,
    ) -> Result<(ServerResult, RequestId), McpError> {
        if !self.is_connected() {
            return Err(self.disconnected());
        }
        let level = (self.identity.protocol_version.as_str() >= PER_REQUEST_LOGS)
            .then(|| LogLevel::ALL[usize::from(self.log_level.load(Ordering::Relaxed))].to_rmcp());
        // A call written the direct way is forgotten when this ends (`_waiting` dropped).
        let (rx, id, route, _waiting) = match self.direct_for(request) {
            Some((calls, session, call)) => {
                let ids = calls.ids();
                // In place before the line goes: progress may come as soon as it has.
                let route = self.links.routes.register(&ids.1, progress);
                let sent = calls.send(session, call, level, ids).await.map_err(|_| {
                    // A closed connection is a lost one, as on rmcp's way.
                    self.ended.cancel();
                    self.disconnected()
                })?;
                (sent.rx, sent.id, route, sent.waiting)
            }
            None => {
                let mut request = request.clone();
                if let Some(level) = level {
                    rmcp::model::GetMeta::get_meta_mut(&mut request).set_log_level(level);
                }
                // No rmcp timeout: the deadlines are kept below, against our own progress
                // routes.
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
                let route = self.links.routes.register(&progress_token, progress);
                (Reply::Line(rx), id, route, None)
            }
        };
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
                    Ok(result) => result.map_err(|e| self.map_answer_err(&id, e)),
                    // The service ended without answering: the connection is gone.
                    Err(_) => {
                        self.ended.cancel();
                        Err(self.disconnected())
                    }
                },
                () = cancel_or_never(cancel) => {
                    self.send_cancelled(id.clone(), "cancelled by the operator").await;
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
                    self.send_cancelled(id.clone(), reason).await;
                    break Err(err);
                }
            }
        };
        drop(route);
        if self.process.is_some() {
            // A busy stdio server is when orphans it left may have exited: reap them (rarely).
            super::transport::reaper::sweep_soon();
        }
        match outcome {
            Ok(result) => Ok((result, id)),
            // The connection dropped mid-request: say how the process ended, if it did.
            Err(McpError::Disconnected { .. }) => {
                if let Some(process) = &self.process {
                    process.wait_exit(EXIT_SETTLE).await;
                }
                Err(self.disconnected())
            }
            Err(other) => Err(other),
        }
    }

    /// Our error for a request that was answered with one: an answer the reader could not
    /// read (it answered for the server, naming why), or else as [`map_err`](Self::map_err).
    fn map_answer_err(&self, id: &RequestId, err: ServiceError) -> McpError {
        if let ServiceError::McpError(_) = &err {
            let unreadable = self
                .stdout_issues
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take_failed(id);
            if let Some(why) = unreadable {
                return McpError::Unreadable(why);
            }
        }
        self.map_err(err)
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
        if let ServiceError::TransportSend(e) = &err {
            if let Some(mapped) = http_answer_error(&self.server, &*e.error) {
                return mapped;
            }
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

    async fn list_tools(&self) -> Result<Vec<ListedTool>, McpError> {
        // A `tools/list_changed` from now on means this listing may be out of date already.
        self.links.take_tools_stale();
        let mut listing = Listing::default();
        let mut cursor: Option<String> = None;
        let mut ttl: Option<u64> = None;
        for _ in 0..MAX_TOOL_PAGES {
            match self.list_page(cursor.take()).await? {
                (ServerResult::ListToolsResult(page), entries) => {
                    let entries = entries.unwrap_or_else(|| PageEntries {
                        // A page rmcp read itself (not over stdio): its tools are in it.
                        tools: page.tools.into_iter().map(ListedTool::from).collect(),
                        skipped: Vec::new(),
                    });
                    listing.add_page(entries);
                    ttl = match (ttl, page.ttl_ms) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    match page.next_cursor {
                        Some(next) if !next.is_empty() => cursor = Some(next),
                        _ => {
                            let (tools, warnings) = listing.finish();
                            *self.list_warnings.lock().unwrap_or_else(|e| e.into_inner()) =
                                warnings;
                            *self.list_ttl.lock().unwrap_or_else(|e| e.into_inner()) =
                                ttl.map(Duration::from_millis);
                            self.listed_for_direct(&tools);
                            return Ok(tools);
                        }
                    }
                }
                (other, _) => {
                    return Err(McpError::Protocol(format!(
                        "tools/list was answered with {}",
                        result_kind(&other)
                    )));
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
        let params = |arguments: JsonObject| {
            let mut params = CallToolRequestParams::new(tool.to_string());
            params.arguments = Some(arguments);
            params
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params(arguments)));
        // The arguments again, for a server that asks for something first and for a tool
        // that turns out to run only as a task (`tasks.rs`).
        let arguments = || match &request {
            ClientRequest::CallToolRequest(call) => call.params.arguments.clone(),
            _ => None,
        };
        let sent = self.request_with_id(&request, Some(&cancel), progress.clone());
        let answer = match sent.await.map(|(result, _)| result) {
            // The server asks for something first (2026-07-28): answered, and called again.
            Ok(asked @ ServerResult::InputRequiredResult(_)) => {
                let call = mrtr::Retried::Call(params(arguments().unwrap_or_default()));
                self.go_on(&call, asked, &cancel, &progress).await
            }
            answer => answer,
        };
        match answer {
            Ok(ServerResult::CallToolResult(result)) if Self::task_required_result(&result) => {
                let arguments = arguments().unwrap_or_default();
                self.call_as_task(tool, arguments, cancel, progress).await
            }
            Err(e) if Self::task_required_error(&e) => {
                let arguments = arguments().unwrap_or_default();
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
        let Some(process) = &self.process else {
            return self.end().await;
        };
        // Its descendants are found while its tree still hangs together: closing its stdin may
        // end it, and orphan (to the console) whatever left its process group.
        let mut escaped = process.descendants();
        let outcome = self.end().await;
        escaped.extend(process.descendants());
        reaper::end_escaped(&escaped).await;
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
