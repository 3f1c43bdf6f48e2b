//! Running starts: every server of a start-up at once (or through the queue of
//! `max_concurrent_starts`), each under the deadline counted from its own start, and a restart
//! by hand. How a finished start joins is `join.rs`; a joined server's watch is `supervise.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::join::{finish, mark_restart, start_timed};
use super::lazy::LazyClient;
use super::single::start_one;
use super::{startup_deadline, supervise, McpClientManager, Shared, StartLimits};
use crate::config::{ServerConfig, StartMode};
use crate::mcp::client::McpClient;
use crate::mcp::events::{Failure, FailureClass, McpEvent, PhaseTimes, ServerReport, StartPhase};
use crate::mcp::tool_cache;
use crate::text::millis;

/// The stderr marker of a restart by hand.
const RESTART_MARKER: &str = "──── restarted ────";

impl McpClientManager {
    /// Starts every enabled server in the background and returns at once. Each server joins
    /// the moment it is ready: its tools are registered (each resolved once from its
    /// annotations and trust) and `ServerStarted` is sent; a failed one is reported the same
    /// way. A server still starting when the deadline passes (counted from its own start) is
    /// stopped and reported `deadline`. Duplicate names in `servers` never start (the second
    /// of the three name checks).
    pub fn launch(&self, servers: &[ServerConfig], limits: StartLimits) {
        let shared = &self.shared;
        shared.t0();
        let deadline = startup_deadline(servers, limits.budget);
        *shared.deadline.lock().unwrap_or_else(|e| e.into_inner()) = deadline;
        let queue = limits
            .max_concurrent
            .map(|n| Arc::new(Semaphore::new(n.max(1))));

        let mut slots = Vec::with_capacity(servers.len());
        let mut duplicates = Vec::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let mut to_start = Vec::new();
        let mut idle = Vec::new();
        for (index, config) in servers.iter().enumerate() {
            if !config.enabled {
                slots.push((ServerReport::disabled(config), false));
                continue;
            }
            if let Some(first) = seen.get(config.name.as_str()) {
                let report = ServerReport::failed(
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
                );
                duplicates.push(report.clone());
                slots.push((report, true));
                continue;
            }
            seen.insert(config.name.as_str(), index);
            if config.start == StartMode::Lazy {
                match tool_cache::read(config) {
                    Ok(tools) => {
                        slots.push((ServerReport::idle(config, tools.len()), false));
                        idle.push((config.clone(), tools));
                        continue;
                    }
                    Err(why) => tracing::info!(
                        server = %config.name,
                        reason = ?why,
                        "lazy server started now: no fresh tool list of it is kept"
                    ),
                }
            }
            slots.push((ServerReport::starting(config), false));
            to_start.push(config.clone());
        }
        let starts: Vec<_> = {
            let mut set = shared.set();
            set.reset_slots(slots);
            to_start
                .into_iter()
                .map(|config| {
                    let (epoch, cancel) = set.begin(&config.name, &shared.closing);
                    (config, epoch, cancel)
                })
                .collect()
        };
        shared.bump();
        for report in duplicates {
            shared.emit(McpEvent::ServerStarted(Box::new(report)));
        }
        for (config, tools) in idle {
            let count = tools.len();
            shared.registry.replace_prefixed(
                &format!("mcp__{}__", config.name),
                LazyClient::tools(shared, &config, tools),
            );
            shared.emit(McpEvent::ServerStarted(Box::new(ServerReport::idle(
                &config, count,
            ))));
        }
        let mut tasks = shared.tasks.lock().unwrap_or_else(|e| e.into_inner());
        for (config, epoch, cancel) in starts {
            let shared = shared.clone();
            let queue = queue.clone();
            tasks.spawn(async move {
                run_start(shared, config, epoch, cancel, deadline, queue).await;
            });
        }
    }

    /// Restarts one server with `config` (which may differ from the one it started with, e.g.
    /// a new trust): stops supervising it (resetting its crash count), abandons a start of it
    /// still in flight, closes it if it runs, removes its tools, starts it under its own
    /// deadline and lets it join again, its tools resolved anew. This also brings back a
    /// server that failed at start-up or that the supervisor gave up on.
    pub async fn restart_server(&self, config: &ServerConfig) -> ServerReport {
        let shared = &self.shared;
        shared.watches.stop(&config.name).await;
        let (old, epoch, cancel) = {
            let mut set = shared.set();
            let old = set.remove(&config.name);
            let (epoch, cancel) = set.begin(&config.name, &shared.closing);
            set.store(ServerReport::starting(config));
            (old, epoch, cancel)
        };
        shared.bump();
        if let Some(old) = old {
            if let Err(e) = old.client.close().await {
                tracing::warn!(server = %config.name, error = %e, "close before restart failed");
            }
            shared.emit(McpEvent::ServerClosed {
                server: config.name.clone(),
            });
        }
        shared
            .registry
            .remove_prefixed(&format!("mcp__{}__", config.name));
        if !config.enabled {
            let report = ServerReport::disabled(config);
            if shared.set().end(epoch, &report) {
                shared.bump();
                shared.emit(McpEvent::ServerStarted(Box::new(report.clone())));
            }
            return report;
        }
        mark_restart(shared, &config.name, RESTART_MARKER);
        start_one(shared, config, epoch, cancel).await
    }
}

/// One server's start within a start-up: its turn in the queue, then its own start under the
/// deadline, then `finish`.
async fn run_start(
    shared: Arc<Shared>,
    config: ServerConfig,
    epoch: u64,
    cancel: CancellationToken,
    deadline: Duration,
    queue: Option<Arc<Semaphore>>,
) {
    let phases = Arc::new(Mutex::new(PhaseTimes::default()));
    let permit = match queue {
        None => None,
        Some(queue) => {
            let waits = queue.available_permits() == 0;
            let queued = Instant::now();
            if waits {
                shared.emit(McpEvent::PhaseStarted {
                    server: config.name.clone(),
                    phase: StartPhase::Queued,
                    elapsed: Duration::ZERO,
                });
            }
            let permit = tokio::select! {
                permit = queue.acquire_owned() => permit.ok(),
                // A newer start of this server, or closing, took over.
                () = cancel.cancelled() => return,
            };
            if waits {
                phases.lock().unwrap_or_else(|e| e.into_inner()).queued_ms =
                    Some(millis(queued.elapsed()));
            }
            permit
        }
    };
    let (outcome, started_at) = start_timed(&shared, &config, phases, cancel, deadline).await;
    // The slot is free once the start has ended, ready or not.
    drop(permit);
    let joined = finish(&shared, &config, epoch, outcome, started_at).await;
    if let Some(client) = &joined.client {
        supervise::watch(&shared, &config, client);
    }
}
