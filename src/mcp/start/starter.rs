//! A start in progress: its phase times, its failure report with the evidence attached, and
//! the last phase, the same for every transport (`tools/list` over all pages, then the report).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::config::ServerConfig;
use crate::mcp::client::{ClientOptions, DefaultMcpClient, McpClient, McpError};
use crate::mcp::events::{
    since, EventSink, Failure, FailureClass, McpEvent, PhaseTimes, ServerInfo, ServerReport,
    ServerStatus, StartPhase, Timeline,
};
use crate::mcp::session::SessionLinks;
use crate::mcp::transport::http::HttpFailure;
use crate::mcp::transport::process::ServerProcess;
use crate::mcp::transport::stderr::StderrRing;

/// stderr lines attached to a failure.
const STDERR_TAIL: usize = 20;
/// After a failed step, how long to wait for the process to be seen exiting.
pub(super) const EXIT_SETTLE: Duration = Duration::from_millis(300);
/// How many times start-up lists the tools again when the server announces a change while
/// (or just before) they are listed, e.g. server-everything registers tools after the handshake.
const START_RELISTS: usize = 3;

/// How one start ended.
pub enum StartOutcome {
    Ready {
        client: Arc<DefaultMcpClient>,
        tools: Vec<crate::mcp::listed::ListedTool>,
        report: Box<ServerReport>,
    },
    Failed(Box<ServerReport>),
}

pub(super) struct Starter<'a> {
    pub(super) config: &'a ServerConfig,
    pub(super) options: &'a ClientOptions,
    pub(super) ring: Arc<StderrRing>,
    pub(super) sink: EventSink,
    /// The session the transport's tap feeds (progress routes, the tools-stale flag).
    pub(super) links: SessionLinks,
    pub(super) phases: Arc<Mutex<PhaseTimes>>,
    pub(super) t0: Instant,
}

impl Starter<'_> {
    pub(super) fn enter(&self, phase: StartPhase) {
        (self.sink)(McpEvent::PhaseStarted {
            server: self.config.name.clone(),
            phase,
            elapsed: self.t0.elapsed(),
        });
    }

    pub(super) fn finish(&self, phase: StartPhase) {
        let mut phases = self.phases.lock().unwrap_or_else(|e| e.into_inner());
        let at = since(self.t0);
        match phase {
            StartPhase::Queued => phases.queued_ms = at,
            StartPhase::Spawn => phases.spawn_ms = at,
            StartPhase::Connect => phases.connect_ms = at,
            StartPhase::Handshake => phases.handshake_ms = at,
            StartPhase::ListTools => phases.list_tools_ms = at,
        }
    }

    fn phases(&self) -> PhaseTimes {
        *self.phases.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Fails the start with an HTTP failure.
    pub(super) async fn fail_http(&self, phase: StartPhase, failure: HttpFailure) -> StartOutcome {
        self.fail_with(
            failure.class,
            phase,
            failure.message,
            None,
            failure.http_status,
        )
        .await
    }

    pub(super) async fn fail(
        &self,
        class: FailureClass,
        phase: StartPhase,
        message: String,
        process: Option<&ServerProcess>,
    ) -> StartOutcome {
        self.fail_with(class, phase, message, process, None).await
    }

    async fn fail_with(
        &self,
        class: FailureClass,
        phase: StartPhase,
        message: String,
        process: Option<&ServerProcess>,
        http_status: Option<u16>,
    ) -> StartOutcome {
        let exit_status = process.and_then(ServerProcess::exit_info);
        if let Some(process) = process {
            process
                .wait_stderr_drained(Duration::from_millis(200))
                .await;
        }
        let report = ServerReport::failed(
            self.config,
            self.phases(),
            Failure {
                class,
                phase: Some(phase),
                message,
                exit_status,
                stderr_tail: self.ring.tail(STDERR_TAIL),
                http_status,
            },
        );
        StartOutcome::Failed(Box::new(report))
    }
}

/// The last phase, the same for every transport: `tools/list` over all pages, then the report.
pub(super) async fn list_tools(starter: &Starter<'_>, client: DefaultMcpClient) -> StartOutcome {
    let config = starter.config;
    // Phase 3: tools/list, all pages.
    starter.enter(StartPhase::ListTools);
    let mut listed = client.list_tools().await;
    for _ in 0..START_RELISTS {
        match &listed {
            // Changed while being listed: list again before the server is reported ready.
            Ok(_) if client.links().tools_stale() => listed = client.list_tools().await,
            Ok(_) | Err(_) => break,
        }
    }
    let tools = match listed {
        Ok(tools) => tools,
        Err(err) => {
            let exited = match client.process() {
                Some(p) => p.wait_exit(EXIT_SETTLE).await,
                None => None,
            };
            let (class, message, http_status) = match (exited, &err) {
                (Some(info), _) => (
                    FailureClass::Exited,
                    format!("the server exited while listing tools ({info})"),
                    None,
                ),
                (None, McpError::Timeout(d)) => (
                    FailureClass::ListTimeout,
                    format!(
                        "no answer to tools/list within request_timeout ({})",
                        crate::text::fmt_duration(*d)
                    ),
                    None,
                ),
                (None, McpError::Unreadable(why)) => {
                    (FailureClass::AnswerUnreadable, why.clone(), None)
                }
                // The token was refused after the handshake (and could not be refreshed).
                (None, McpError::NeedsLogin(message)) => (
                    FailureClass::NeedsLogin,
                    format!("tools/list: {message}"),
                    None,
                ),
                (None, McpError::HttpStatus { status, message }) => (
                    FailureClass::HttpStatus,
                    format!("tools/list: {message}"),
                    Some(*status),
                ),
                (None, other) => (
                    FailureClass::ProtocolError,
                    format!("tools/list failed: {other}"),
                    None,
                ),
            };
            let outcome = starter
                .fail_with(
                    class,
                    StartPhase::ListTools,
                    message,
                    client.process(),
                    http_status,
                )
                .await;
            let _ = client.close().await;
            return outcome;
        }
    };
    starter.finish(StartPhase::ListTools);

    let identity = client.identity().clone();
    let info = client.peer().peer_info();
    let (capabilities, instructions) = crate::mcp::capabilities::from_peer_info(info.as_deref());
    // Its instructions are text the model may read: flagged as a tool's texts are (as they
    // came, before they were made safe to show).
    let mut warnings = client.warnings();
    if let Some(raw) = info.as_ref().and_then(|i| i.instructions.as_deref()) {
        let flags = crate::tool::poison::scan("instructions", raw, &config.name);
        if !flags.is_empty() {
            warnings.push(format!(
                "its instructions are flagged (tool poisoning): {}",
                crate::tool::poison::words(&flags)
            ));
        }
    }
    let report = ServerReport {
        name: config.name.clone(),
        transport: config.transport,
        status: ServerStatus::Ready,
        start: config.start,
        protocol_version: Some(identity.protocol_version),
        server_info: Some(ServerInfo {
            name: identity.name,
            version: identity.version,
        }),
        phases: starter.phases(),
        tools: tools.len(),
        warnings,
        failure: None,
        capabilities,
        instructions,
        sandbox: None,
        timeline: Timeline::default(),
    };
    StartOutcome::Ready {
        client: Arc::new(client),
        tools,
        report: Box::new(report),
    }
}
