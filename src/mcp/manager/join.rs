//! How a start ends: `start_timed` runs one under its deadline, and `finish` is the one place a
//! finished start becomes a ready server (it joins the set, its tools are registered) or a
//! failure on screen. Shared by start-up, restarts by hand and the supervisor.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::set::{Join, ReadyServer};
use super::Shared;
use crate::config::{ServerConfig, StartMode};
use crate::mcp::client::{DefaultMcpClient, McpClient};
use crate::mcp::events::{
    Failure, FailureClass, McpEvent, PhaseTimes, ServerReport, StartPhase, Timeline,
};
use crate::mcp::start::{start_server, StartOutcome};
use crate::mcp::tool_cache;
use crate::text::millis;

/// stderr lines attached to a deadline failure.
const STDERR_TAIL: usize = 20;

/// Runs one start under `deadline` from now; returns how it ended and when (from the start of
/// start-up) it began. At the deadline the start is dropped, which kills what it spawned.
pub(super) async fn start_timed(
    shared: &Arc<Shared>,
    config: &ServerConfig,
    phases: Arc<Mutex<PhaseTimes>>,
    cancel: CancellationToken,
    deadline: Duration,
) -> (StartOutcome, u64) {
    let started_at = millis(shared.t0().elapsed());
    let start = start_server(
        config,
        &shared.options,
        shared.stderr_ring(&config.name),
        shared.sink.clone(),
        shared.tap.clone(),
        phases.clone(),
        cancel,
    );
    let outcome = match tokio::time::timeout(deadline, start).await {
        Ok(outcome) => outcome,
        Err(_) => {
            let phases = *phases.lock().unwrap_or_else(|e| e.into_inner());
            let phase = if phases.handshake_ms.is_some() {
                StartPhase::ListTools
            } else if phases.spawn_ms.is_some() || phases.connect_ms.is_some() {
                StartPhase::Handshake
            } else {
                StartPhase::first(config.transport)
            };
            StartOutcome::Failed(Box::new(ServerReport::failed(
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
                    stderr_tail: shared.stderr_ring(&config.name).tail(STDERR_TAIL),
                    http_status: None,
                },
            )))
        }
    };
    (outcome, started_at)
}

/// What became of a finished start.
pub(super) struct Joined {
    pub(super) report: ServerReport,
    /// The client, if it joined the ready set (the caller watches it).
    pub(super) client: Option<Arc<DefaultMcpClient>>,
}

/// A start ended. If it is still the server's current start: a ready client joins the ready
/// set and its tools are registered (replacing any of an earlier run, in one step); a failure
/// is stored. Either way `ServerStarted` tells the driver. A start that a newer one overtook
/// (or that ended while the manager closed) is closed, never registered.
pub(super) async fn finish(
    shared: &Arc<Shared>,
    config: &ServerConfig,
    epoch: u64,
    outcome: StartOutcome,
    started_at: u64,
) -> Joined {
    let ended_at = millis(shared.t0().elapsed());
    match outcome {
        StartOutcome::Failed(mut report) => {
            report.timeline = Timeline {
                started_at_ms: Some(started_at),
                ready_at_ms: None,
                failed_at_ms: Some(ended_at),
            };
            if shared.set().end(epoch, &report) {
                shared.bump();
                shared.emit(McpEvent::ServerStarted(report.clone()));
            }
            Joined {
                report: *report,
                client: None,
            }
        }
        StartOutcome::Ready {
            client,
            tools,
            mut report,
        } => {
            report.timeline = Timeline {
                started_at_ms: Some(started_at),
                ready_at_ms: Some(ended_at),
                failed_at_ms: None,
            };
            if config.start == StartMode::Lazy {
                tool_cache::write(config, &tools, client.tools_ttl());
            }
            let joined = {
                let mut set = shared.set();
                let ready = ReadyServer::new(client.clone(), config.clone(), tools);
                let joined = set.join(epoch, ready, &report);
                if let Join::Joined = joined {
                    // Under the set's lock: a restart cannot remove them in between.
                    shared.register_tools(&set, &config.name);
                }
                joined
            };
            match joined {
                Join::Joined => {
                    shared.bump();
                    shared.emit(McpEvent::ServerStarted(report.clone()));
                    Joined {
                        report: *report,
                        client: Some(client),
                    }
                }
                Join::Stale(client) => {
                    tracing::info!(server = %config.name, "closing a start that was overtaken or abandoned");
                    let _ = client.close().await;
                    Joined {
                        report: *report,
                        client: None,
                    }
                }
                Join::Taken(client) => {
                    let _ = client.close().await;
                    tracing::warn!(server = %config.name, "a server of this name is already registered; the later one was closed");
                    let report = ServerReport::failed(
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
                    Joined {
                        report,
                        client: None,
                    }
                }
            }
        }
    }
}

/// Puts a marker line into a server's stderr ring (which survives restarts) showing where a
/// new process begins.
pub(super) fn mark_restart(shared: &Shared, server: &str, marker: &str) {
    let line = shared.stderr_ring(server).push(marker);
    shared.emit(McpEvent::Stderr {
        server: server.to_string(),
        line,
    });
}
