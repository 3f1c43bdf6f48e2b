//! `McpClientManager`: starts every server at once under one deadline, keeps the ready clients,
//! registers their tools (resolving traits once, DESIGN §3), and closes everything.
//!
//! The per-server start sequence and its failure classification live in `start.rs`; this file
//! owns the parallelism, the deadline, name uniqueness and the race discard.

mod tools;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::client::{ClientOptions, DefaultMcpClient, McpClient, McpError};
use super::events::{
    millis, EventSink, Failure, FailureClass, McpEvent, PhaseTimes, ServerReport, ServerStatus,
    StartPhase,
};
use super::notify::NotificationTap;
use super::start::{start_server, StartOutcome};
use super::supervisor::{Crashes, Supervisor};
use super::transport::stderr::StderrRing;
use crate::config::ServerConfig;
use crate::tool::ToolRegistry;

/// Allowance for starting processes, added to the largest request timeout (DESIGN §3).
pub const STARTUP_SPAWN_ALLOWANCE: Duration = Duration::from_secs(30);
/// How long cleanup of servers abandoned at the deadline may take during `close_all`.
const ABANDONED_CLEANUP: Duration = Duration::from_secs(3);

/// The single start-up deadline: `max(request_timeout) + 30 s`, capped by the budget.
pub fn startup_deadline(servers: &[ServerConfig], budget: Option<Duration>) -> Duration {
    let max_timeout = servers
        .iter()
        .filter(|s| s.enabled)
        .map(|s| s.request_timeout)
        .max()
        .unwrap_or(Duration::ZERO);
    let deadline = max_timeout + STARTUP_SPAWN_ALLOWANCE;
    match budget {
        Some(budget) => deadline.min(budget),
        None => deadline,
    }
}

/// The outcome of `start_all`.
#[derive(Debug, Clone, PartialEq)]
pub struct StartSummary {
    pub deadline: Duration,
    pub elapsed: Duration,
    /// One report per configured server, in config order.
    pub servers: Vec<ServerReport>,
}

pub(super) struct ReadyServer {
    pub(super) client: Arc<DefaultMcpClient>,
    pub(super) config: ServerConfig,
    pub(super) tools: Vec<rmcp::model::Tool>,
}

/// The stderr marker of a restart by hand.
const RESTART_MARKER: &str = "──── restarted ────";

/// Owns every MCP connection of one runtime.
pub struct McpClientManager {
    pub(super) ready: Mutex<BTreeMap<String, ReadyServer>>,
    reports: Mutex<Vec<ServerReport>>,
    /// stderr rings by server name; they survive restarts.
    stderr: Mutex<HashMap<String, Arc<StderrRing>>>,
    abandoned: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    sink: EventSink,
    tap: NotificationTap,
    options: ClientOptions,
    pub(super) supervisor: Supervisor,
}

impl McpClientManager {
    pub fn new(sink: EventSink, tap: NotificationTap) -> Self {
        McpClientManager::with_options(sink, tap, ClientOptions::default())
    }

    /// A manager whose clients use `options` (the conformance client; the console uses `new`).
    pub fn with_options(sink: EventSink, tap: NotificationTap, options: ClientOptions) -> Self {
        McpClientManager {
            ready: Mutex::new(BTreeMap::new()),
            reports: Mutex::new(Vec::new()),
            stderr: Mutex::new(HashMap::new()),
            abandoned: Mutex::new(Vec::new()),
            sink,
            tap,
            options,
            supervisor: Supervisor::default(),
        }
    }

    /// Starts supervising: every ready server is watched from now on, and one that goes away by
    /// itself is restarted as its `restart` policy says, its tools re-registered in `registry`.
    /// The runtime calls this once its registry holds the first tools.
    pub fn supervise(self: &Arc<Self>, registry: Arc<ToolRegistry>) {
        self.supervisor.attach(Arc::downgrade(self), registry);
        let ready: Vec<(ServerConfig, Arc<DefaultMcpClient>)> = self
            .ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(|s| (s.config.clone(), s.client.clone()))
            .collect();
        for (config, client) in ready {
            self.supervisor.watch(&config, &client);
        }
    }

    /// How often `server` crashed since it started or was last restarted by hand.
    pub fn crashes(&self, server: &str) -> Crashes {
        self.supervisor.crashes(server)
    }

    /// The process id of a ready stdio server.
    pub fn pid(&self, server: &str) -> Option<i32> {
        self.ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(server)
            .and_then(|s| s.client.process().map(|p| p.pid()))
    }

    pub(super) fn emit(&self, event: McpEvent) {
        (self.sink)(event);
    }

    /// Starts every enabled server at once and waits until all have finished starting or the
    /// deadline passes. Servers still starting then are reported `deadline` and cleaned up in
    /// the background; a client that succeeds after that is closed, never registered.
    pub async fn start_all(
        &self,
        servers: &[ServerConfig],
        budget: Option<Duration>,
    ) -> StartSummary {
        let started = Instant::now();
        let deadline = startup_deadline(servers, budget);
        let deadline_at = tokio::time::Instant::now() + deadline;
        let mut reports: Vec<Option<ServerReport>> = vec![None; servers.len()];
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let mut tasks: JoinSet<(usize, StartOutcome)> = JoinSet::new();
        let mut progress: Vec<Arc<Mutex<PhaseTimes>>> = Vec::with_capacity(servers.len());
        let cancel = CancellationToken::new();

        for (index, config) in servers.iter().enumerate() {
            let phases = Arc::new(Mutex::new(PhaseTimes::default()));
            progress.push(phases.clone());
            if !config.enabled {
                reports[index] = Some(disabled_report(config));
                continue;
            }
            // Second of the three name checks: a duplicate in the list never starts.
            if let Some(first) = seen.get(config.name.as_str()) {
                reports[index] = Some(failed_report(
                    config,
                    PhaseTimes::default(),
                    Failure {
                        class: FailureClass::DuplicateName,
                        phase: None,
                        message: format!(
                            "server name {} is already used by server #{} in the list",
                            config.name,
                            first + 1
                        ),
                        exit_status: None,
                        stderr_tail: Vec::new(),
                        http_status: None,
                    },
                ));
                continue;
            }
            seen.insert(config.name.as_str(), index);
            let ring = self.stderr_ring(&config.name);
            let config = config.clone();
            let sink = self.sink.clone();
            let tap = self.tap.clone();
            let cancel = cancel.child_token();
            let options = self.options.clone();
            tasks.spawn(async move {
                let outcome =
                    start_server(&config, &options, ring, sink, tap, phases, cancel).await;
                (index, outcome)
            });
        }

        loop {
            let next = tokio::time::timeout_at(deadline_at, tasks.join_next()).await;
            match next {
                Ok(None) => break,
                Ok(Some(Ok((index, outcome)))) => {
                    reports[index] = Some(self.accept(&servers[index], outcome).await);
                }
                Ok(Some(Err(join_error))) => {
                    tracing::error!(%join_error, "a server start task failed");
                }
                Err(_elapsed) => break,
            }
        }

        // Whoever is still starting missed the deadline.
        let late = !tasks.is_empty();
        for (index, slot) in reports.iter_mut().enumerate() {
            if slot.is_none() {
                let config = &servers[index];
                let phases = *progress[index].lock().unwrap_or_else(|e| e.into_inner());
                let phase = if phases.handshake_ms.is_some() {
                    StartPhase::ListTools
                } else if phases.spawn_ms.is_some() || phases.connect_ms.is_some() {
                    StartPhase::Handshake
                } else {
                    StartPhase::first(config.transport)
                };
                let report = failed_report(
                    config,
                    phases,
                    Failure {
                        class: FailureClass::Deadline,
                        phase: Some(phase),
                        message: format!(
                            "still in {} when the start-up deadline of {} passed",
                            phase.as_str(),
                            crate::text::fmt_duration(deadline)
                        ),
                        exit_status: None,
                        stderr_tail: self.stderr_ring(&config.name).tail(20),
                        http_status: None,
                    },
                );
                (self.sink)(McpEvent::ServerStarted(Box::new(report.clone())));
                *slot = Some(report);
            }
        }
        if late {
            cancel.cancel();
            let handle = tokio::spawn(discard_late(tasks));
            self.abandoned
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(handle);
        }

        let servers: Vec<ServerReport> = reports.into_iter().flatten().collect();
        *self.reports.lock().unwrap_or_else(|e| e.into_inner()) = servers.clone();
        StartSummary {
            deadline,
            elapsed: started.elapsed(),
            servers,
        }
    }

    /// Takes a finished start: a ready client joins the set unless its name is taken (the
    /// last of the three name checks: the first holder wins, the later one is closed).
    async fn accept(&self, config: &ServerConfig, outcome: StartOutcome) -> ServerReport {
        match outcome {
            StartOutcome::Failed(report) => *report,
            StartOutcome::Ready {
                client,
                tools,
                report,
            } => {
                let duplicate = {
                    let mut ready = self.ready.lock().unwrap_or_else(|e| e.into_inner());
                    if ready.contains_key(&config.name) {
                        true
                    } else {
                        ready.insert(
                            config.name.clone(),
                            ReadyServer {
                                client: client.clone(),
                                config: config.clone(),
                                tools,
                            },
                        );
                        false
                    }
                };
                if duplicate {
                    let _ = client.close().await;
                    let report = failed_report(
                        config,
                        report.phases,
                        Failure {
                            class: FailureClass::DuplicateName,
                            phase: None,
                            message: format!(
                                "a server named {} is already registered",
                                config.name
                            ),
                            exit_status: None,
                            stderr_tail: Vec::new(),
                            http_status: None,
                        },
                    );
                    (self.sink)(McpEvent::ServerStarted(Box::new(report.clone())));
                    return report;
                }
                *report
            }
        }
    }

    /// Starts one server alone under its own deadline, after a marker line in its stderr ring
    /// (which survives restarts) showing where the new process begins.
    pub(super) async fn start_alone(&self, config: &ServerConfig, marker: &str) -> StartOutcome {
        let line = self.stderr_ring(&config.name).push(marker);
        (self.sink)(McpEvent::Stderr {
            server: config.name.clone(),
            line,
        });
        let phases = Arc::new(Mutex::new(PhaseTimes::default()));
        let deadline = startup_deadline(std::slice::from_ref(config), None);
        let start = start_server(
            config,
            &self.options,
            self.stderr_ring(&config.name),
            self.sink.clone(),
            self.tap.clone(),
            phases.clone(),
            CancellationToken::new(),
        );
        match tokio::time::timeout(deadline, start).await {
            Ok(outcome) => outcome,
            Err(_) => {
                let report = failed_report(
                    config,
                    *phases.lock().unwrap_or_else(|e| e.into_inner()),
                    Failure {
                        class: FailureClass::Deadline,
                        phase: None,
                        message: format!(
                            "restart did not finish within {}",
                            crate::text::fmt_duration(deadline)
                        ),
                        exit_status: None,
                        http_status: None,
                        stderr_tail: self.stderr_ring(&config.name).tail(20),
                    },
                );
                (self.sink)(McpEvent::ServerStarted(Box::new(report.clone())));
                StartOutcome::Failed(Box::new(report))
            }
        }
    }

    pub(super) fn store_report(&self, report: ServerReport) {
        let mut reports = self.reports.lock().unwrap_or_else(|e| e.into_inner());
        match reports.iter_mut().find(|r| r.name == report.name) {
            Some(slot) => *slot = report,
            None => reports.push(report),
        }
    }

    /// Restarts one server with `config` (which may differ from the one it started with, e.g.
    /// a new trust): stops supervising it (resetting its crash count), closes it if it runs,
    /// removes its tools from `registry`, starts it under its own deadline and registers its
    /// tools again, resolved anew; a ready server is supervised again.
    pub async fn restart_server(
        &self,
        config: &ServerConfig,
        registry: &ToolRegistry,
    ) -> ServerReport {
        self.supervisor.stop(&config.name).await;
        let old = self
            .ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&config.name);
        if let Some(old) = old {
            if let Err(e) = old.client.close().await {
                tracing::warn!(server = %config.name, error = %e, "close before restart failed");
            }
            (self.sink)(McpEvent::ServerClosed {
                server: config.name.clone(),
            });
        }
        registry.remove_prefixed(&format!("mcp__{}__", config.name));
        let report = if config.enabled {
            let outcome = self.start_alone(config, RESTART_MARKER).await;
            self.accept(config, outcome).await
        } else {
            disabled_report(config)
        };
        self.register_server_tools(&config.name, registry);
        self.store_report(report.clone());
        let ready = self
            .ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&config.name)
            .map(|s| s.client.clone());
        if let Some(client) = ready {
            self.supervisor.watch(config, &client);
        }
        report
    }

    /// The start-up reports of the last `start_all`.
    pub fn reports(&self) -> Vec<ServerReport> {
        self.reports
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The stderr ring of a server (created on first use; it survives restarts).
    pub fn stderr_ring(&self, server: &str) -> Arc<StderrRing> {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(server.to_string())
            .or_default()
            .clone()
    }

    /// The ready client of a server.
    pub fn client(&self, server: &str) -> Option<Arc<dyn McpClient>> {
        self.ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(server)
            .map(|s| s.client.clone() as Arc<dyn McpClient>)
    }

    /// Stops the supervisor (so nothing restarts behind it), then closes every server, all at
    /// once; one failing close does not stop the others. Returns the failures, by server.
    pub async fn close_all(&self) -> Vec<(String, McpError)> {
        self.supervisor.shutdown().await;
        let servers: Vec<(String, Arc<DefaultMcpClient>)> = {
            let mut ready = self.ready.lock().unwrap_or_else(|e| e.into_inner());
            std::mem::take(&mut *ready)
                .into_iter()
                .map(|(name, s)| (name, s.client))
                .collect()
        };
        let mut closing = JoinSet::new();
        for (name, client) in servers {
            closing.spawn(async move {
                let result = client.close().await;
                (name, result)
            });
        }
        let mut failures = Vec::new();
        while let Some(joined) = closing.join_next().await {
            match joined {
                Ok((name, Ok(()))) => (self.sink)(McpEvent::ServerClosed { server: name }),
                Ok((name, Err(e))) => {
                    tracing::warn!(server = %name, error = %e, "close failed");
                    (self.sink)(McpEvent::ServerClosed {
                        server: name.clone(),
                    });
                    failures.push((name, e));
                }
                Err(join_error) => {
                    tracing::error!(%join_error, "a close task failed");
                    failures.push(("?".into(), McpError::Transport(join_error.to_string())));
                }
            }
        }
        let abandoned: Vec<_> =
            std::mem::take(&mut *self.abandoned.lock().unwrap_or_else(|e| e.into_inner()));
        for handle in abandoned {
            let _ = tokio::time::timeout(ABANDONED_CLEANUP, handle).await;
        }
        failures
    }
}

/// Waits for starts abandoned at the deadline and closes any that succeeded anyway.
async fn discard_late(mut tasks: JoinSet<(usize, StartOutcome)>) {
    while let Some(joined) = tasks.join_next().await {
        if let Ok((_, StartOutcome::Ready { client, report, .. })) = joined {
            tracing::info!(server = %report.name, "closing a server that became ready after the deadline");
            let _ = client.close().await;
        }
    }
}

fn disabled_report(config: &ServerConfig) -> ServerReport {
    ServerReport {
        name: config.name.clone(),
        transport: config.transport,
        status: ServerStatus::Disabled,
        protocol_version: None,
        server_info: None,
        phases: PhaseTimes::default(),
        tools: 0,
        warnings: Vec::new(),
        failure: None,
    }
}

/// A failed report for `config`.
pub(crate) fn failed_report(
    config: &ServerConfig,
    phases: PhaseTimes,
    failure: Failure,
) -> ServerReport {
    ServerReport {
        name: config.name.clone(),
        transport: config.transport,
        status: ServerStatus::Failed,
        protocol_version: None,
        server_info: None,
        phases,
        tools: 0,
        warnings: Vec::new(),
        failure: Some(failure),
    }
}

/// Convenience for reports: milliseconds since `start`.
pub(crate) fn since(start: Instant) -> Option<u64> {
    Some(millis(start.elapsed()))
}
