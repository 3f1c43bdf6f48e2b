//! The start of one server, phase by phase (spawn or connect, handshake, tools listed), and the
//! classification of whatever goes wrong into a `FailureClass` with the evidence attached.
//!
//! The stdio sequence lives here; HTTP servers connect in `start_remote.rs` and then share the
//! tools-listed phase and the report below.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::client::{ClientOptions, DefaultMcpClient, HandshakeError, McpClient, McpError};
use super::events::{
    EventSink, Failure, FailureClass, McpEvent, PhaseTimes, ServerInfo, ServerReport, ServerStatus,
    StartPhase,
};
use super::manager::{failed_report, since};
use super::notify::NotificationTap;
use super::session::SessionLinks;
use super::transport::http::HttpFailure;
use super::transport::lines::{LineContext, LineTransport, StdoutIssues};
use super::transport::process::{ServerProcess, SpawnError, SpawnSpec};
use super::transport::stderr::StderrRing;
use crate::config::{ServerConfig, TransportKind};

/// stderr lines attached to a failure.
const STDERR_TAIL: usize = 20;
/// After a failed handshake, how long to wait for the process to be seen exiting.
const EXIT_SETTLE: Duration = Duration::from_millis(300);
/// How many times start-up lists the tools again when the server announces a change while
/// (or just before) they are listed, e.g. server-everything registers tools after the handshake.
const START_RELISTS: usize = 3;

/// How one start ended.
pub enum StartOutcome {
    Ready {
        client: Arc<DefaultMcpClient>,
        tools: Vec<rmcp::model::Tool>,
        report: Box<ServerReport>,
    },
    Failed(Box<ServerReport>),
}

pub(super) struct Starter<'a> {
    pub(super) config: &'a ServerConfig,
    pub(super) options: &'a ClientOptions,
    ring: Arc<StderrRing>,
    pub(super) sink: EventSink,
    /// The session the transport's tap feeds (progress routes, the tools-stale flag).
    pub(super) links: SessionLinks,
    phases: Arc<Mutex<PhaseTimes>>,
    t0: Instant,
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
        let report = failed_report(
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
        (self.sink)(McpEvent::ServerStarted(Box::new(report.clone())));
        StartOutcome::Failed(Box::new(report))
    }
}

/// Starts one server. Cancelling `cancel` abandons the start (the process group is killed, the
/// connection dropped).
pub async fn start_server(
    config: &ServerConfig,
    options: &ClientOptions,
    ring: Arc<StderrRing>,
    sink: EventSink,
    tap: NotificationTap,
    phases: Arc<Mutex<PhaseTimes>>,
    cancel: CancellationToken,
) -> StartOutcome {
    // A server's own roots win over the shared ones.
    let options = &match &config.roots {
        Some(roots) => ClientOptions {
            roots: roots.clone(),
            ..options.clone()
        },
        None => options.clone(),
    };
    let links = SessionLinks::new(&config.name, sink.clone());
    let tap = links.tap(tap);
    let starter = Starter {
        config,
        options,
        ring,
        sink,
        links,
        phases,
        t0: Instant::now(),
    };
    tokio::select! {
        outcome = start_inner(&starter, tap) => outcome,
        () = cancel.cancelled() => {
            starter.fail(
                FailureClass::Deadline,
                StartPhase::first(config.transport),
                "abandoned at the start-up deadline".into(),
                None,
            ).await
        }
    }
}

async fn start_inner(starter: &Starter<'_>, tap: NotificationTap) -> StartOutcome {
    match starter.config.transport {
        TransportKind::Stdio => start_stdio(starter, tap).await,
        TransportKind::StreamableHttp => {
            super::start_remote::start_streamable_http(starter, tap).await
        }
        TransportKind::Sse => super::start_remote::start_sse(starter, tap).await,
    }
}

async fn start_stdio(starter: &Starter<'_>, tap: NotificationTap) -> StartOutcome {
    let config = starter.config;
    // Phase 1: spawn.
    starter.enter(StartPhase::Spawn);
    let Some(command) = config.command.clone() else {
        return starter
            .fail(
                FailureClass::SpawnFailed,
                StartPhase::Spawn,
                "no command configured".into(),
                None,
            )
            .await;
    };
    let spec = SpawnSpec {
        command,
        args: config.args.clone(),
        env: config
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        cwd: config.cwd.clone(),
    };
    let server = config.name.clone();
    let sink = starter.sink.clone();
    let on_line: Arc<dyn Fn(String) + Send + Sync> = Arc::new(move |line| {
        sink(McpEvent::Stderr {
            server: server.clone(),
            line,
        })
    });
    let (process, pipes) = match ServerProcess::spawn(&spec, starter.ring.clone(), on_line) {
        Ok(spawned) => spawned,
        Err(err) => {
            let class = match &err {
                SpawnError::NotFound { .. } => FailureClass::CommandNotFound,
                SpawnError::Other { .. } => FailureClass::SpawnFailed,
            };
            return starter
                .fail(class, StartPhase::Spawn, err.to_string(), None)
                .await;
        }
    };
    starter.finish(StartPhase::Spawn);

    // Phase 2: handshake.
    starter.enter(StartPhase::Handshake);
    let issues = Arc::new(Mutex::new(StdoutIssues::default()));
    let mut exit = process.exit_watch();
    let closed = async move {
        let _ = exit.wait_for(Option::is_some).await;
    };
    let transport = LineTransport::new(
        pipes.stdout,
        pipes.stdin,
        closed,
        LineContext {
            server: config.name.clone(),
            tap,
            issues: issues.clone(),
        },
    );
    let client = match DefaultMcpClient::handshake(
        starter.links.clone(),
        transport,
        Some(process),
        config.request_timeout,
        issues.clone(),
        starter.options,
    )
    .await
    {
        Ok(client) => client,
        Err((err, process)) => {
            let process = process.as_ref();
            // A timed-out or refused handshake closed the server's stdin on the way out, so an
            // exit seen now is our doing: only a lost connection waits to see whether the
            // server died (a server that answered was alive; its exit status is still shown).
            let exited = match (&err, process) {
                (HandshakeError::Closed { .. }, Some(p)) => p.wait_exit(EXIT_SETTLE).await,
                (
                    HandshakeError::Timeout(_)
                    | HandshakeError::Failed { .. }
                    | HandshakeError::Unreadable(_),
                    _,
                )
                | (_, None) => None,
            };
            let garbage = issues.lock().unwrap_or_else(|e| e.into_inner()).warnings();
            let (class, mut message) = match (exited, err) {
                (Some(info), _) => (
                    FailureClass::Exited,
                    format!("the server exited during the handshake ({info})"),
                ),
                (None, HandshakeError::Timeout(d)) => (
                    FailureClass::HandshakeTimeout,
                    format!(
                        "no answer to the handshake within request_timeout ({})",
                        crate::text::fmt_duration(d)
                    ),
                ),
                (
                    None,
                    HandshakeError::Closed { message, .. } | HandshakeError::Failed { message, .. },
                ) => (FailureClass::ProtocolError, message),
                (None, HandshakeError::Unreadable(why)) => (FailureClass::AnswerUnreadable, why),
            };
            if !garbage.is_empty() {
                message = format!("{message}; {}", garbage.join("; "));
            }
            return starter
                .fail(class, StartPhase::Handshake, message, process)
                .await;
        }
    };
    starter.finish(StartPhase::Handshake);
    list_tools(starter, client).await
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
    let report = ServerReport {
        name: config.name.clone(),
        transport: config.transport,
        status: ServerStatus::Ready,
        protocol_version: Some(identity.protocol_version),
        server_info: Some(ServerInfo {
            name: identity.name,
            version: identity.version,
        }),
        phases: starter.phases(),
        tools: tools.len(),
        warnings: client.warnings(),
        failure: None,
    };
    (starter.sink)(McpEvent::ServerStarted(Box::new(report.clone())));
    StartOutcome::Ready {
        client: Arc::new(client),
        tools,
        report: Box::new(report),
    }
}
