//! `McpClientManager`: starts every server at once, each under the one start-up deadline counted
//! from its own start; a server joins the moment it is ready (its tools registered, resolved
//! once, docs/ARCHITECTURE.md §3) while the others still start; restarts, supervision and closing.
//!
//! `set.rs` is the one owner of which servers are ready (and of the reports); `launch.rs` runs
//! the starts of a start-up (the queue, the deadline) and restarts by hand; `join.rs` is where a
//! finished start joins or fails; `tools.rs` builds and refreshes a server's tools;
//! `supervise.rs` is the watch loop that brings a server back after it went away;
//! `content.rs` hands out the ready servers' resource and prompt interfaces; `lazy.rs` offers
//! the kept tools of an idle `start: lazy` server and starts it on its first call.

mod content;
mod join;
mod launch;
mod lazy;
mod set;
mod single;
mod supervise;
mod tools;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use self::set::ServerSet;
use super::client::{ClientOptions, DefaultMcpClient, McpClient, McpError};
use super::events::{EventSink, McpEvent, ServerReport, ServerStatus};
use super::notify::NotificationTap;
use super::supervisor::{Crashes, Watches};
use super::transport::reaper;
use super::transport::stderr::StderrRing;
use crate::config::ServerConfig;
use crate::tool::ToolRegistry;

/// Allowance for starting processes, added to the largest request timeout
/// (docs/ARCHITECTURE.md §3).
pub const STARTUP_SPAWN_ALLOWANCE: Duration = Duration::from_secs(30);
/// How long abandoned starts may take to clean up during `close_all`.
const ABANDONED_CLEANUP: Duration = Duration::from_secs(3);

/// The single start-up deadline: `max(request_timeout) + 30 s`, capped by the budget. Each
/// server has this long from its own start (after any wait in the queue).
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

/// What bounds a start-up besides each server's own timeouts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StartLimits {
    /// `mcp.startup_budget`: a lower cap on the deadline.
    pub budget: Option<Duration>,
    /// `mcp.max_concurrent_starts`: at most this many servers between their own start and
    /// ready at once; the others wait in the queue (`None`: no limit).
    pub max_concurrent: Option<usize>,
}

/// How a start-up went, once every server has finished starting.
#[derive(Debug, Clone, PartialEq)]
pub struct StartSummary {
    pub deadline: Duration,
    /// From the start of start-up until the last server finished starting.
    pub elapsed: Duration,
    /// One report per configured server, in config order.
    pub servers: Vec<ServerReport>,
}

/// What the manager's tasks share.
pub(crate) struct Shared {
    set: Mutex<ServerSet>,
    /// Bumped whenever a report changes (waiters of `settled` / `wait_for`).
    changed: watch::Sender<u64>,
    /// stderr rings by server name; they survive restarts.
    stderr: Mutex<HashMap<String, Arc<StderrRing>>>,
    /// The start tasks of `launch`.
    tasks: Mutex<JoinSet<()>>,
    /// Cancelled by `close_all`: the parent of every start's cancellation.
    closing: CancellationToken,
    /// When start-up began (the first `launch`); report times count from here.
    t0: OnceLock<Instant>,
    /// The deadline of the last `launch`.
    deadline: Mutex<Duration>,
    sink: EventSink,
    tap: NotificationTap,
    options: ClientOptions,
    /// Where ready servers' tools are registered.
    registry: Arc<ToolRegistry>,
    watches: Watches,
}

impl Shared {
    fn set(&self) -> MutexGuard<'_, ServerSet> {
        self.set.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn emit(&self, event: McpEvent) {
        (self.sink)(event);
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn t0(&self) -> Instant {
        *self.t0.get_or_init(Instant::now)
    }

    /// The stderr ring of a server (created on first use; it survives restarts).
    fn stderr_ring(&self, server: &str) -> Arc<StderrRing> {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(server.to_string())
            .or_default()
            .clone()
    }
}

/// Owns every MCP connection of one runtime.
pub struct McpClientManager {
    shared: Arc<Shared>,
}

impl McpClientManager {
    /// A manager with default client options and a registry of its own.
    pub fn new(sink: EventSink, tap: NotificationTap) -> Self {
        McpClientManager::with_registry(
            sink,
            tap,
            ClientOptions::default(),
            Arc::new(ToolRegistry::new()),
        )
    }

    /// A manager whose clients use `options` and whose ready servers' tools go into `registry`
    /// (the runtime's).
    pub fn with_registry(
        sink: EventSink,
        tap: NotificationTap,
        options: ClientOptions,
        registry: Arc<ToolRegistry>,
    ) -> Self {
        let (changed, _) = watch::channel(0);
        McpClientManager {
            shared: Arc::new(Shared {
                set: Mutex::new(ServerSet::default()),
                changed,
                stderr: Mutex::new(HashMap::new()),
                tasks: Mutex::new(JoinSet::new()),
                closing: CancellationToken::new(),
                t0: OnceLock::new(),
                deadline: Mutex::new(Duration::ZERO),
                sink,
                tap,
                options,
                registry,
                watches: Watches::default(),
            }),
        }
    }

    /// The registry ready servers' tools are registered in.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.shared.registry
    }

    /// Starts supervising: every server that becomes ready from now on is watched, and one
    /// that goes away by itself is restarted as its `restart` policy says. Call it before
    /// `launch`.
    pub fn supervise(&self) {
        self.shared.watches.switch_on();
    }

    /// How often `server` crashed since it started or was last restarted by hand.
    pub fn crashes(&self, server: &str) -> Crashes {
        self.shared.watches.crashes(server)
    }

    /// The process id of a ready stdio server.
    pub fn pid(&self, server: &str) -> Option<i32> {
        self.shared
            .set()
            .ready(server)
            .and_then(|s| s.client.process().map(|p| p.pid()))
    }

    /// Starts every enabled server and waits until all have finished starting (each joined as
    /// it became ready, or failed, at the latest at the deadline). For `launch` + `settled`
    /// in one step.
    pub async fn start_all(
        &self,
        servers: &[ServerConfig],
        budget: Option<Duration>,
    ) -> StartSummary {
        self.launch(
            servers,
            StartLimits {
                budget,
                max_concurrent: None,
            },
        );
        self.settled().await
    }

    /// The deadline of the last start-up.
    pub fn deadline(&self) -> Duration {
        *self
            .shared
            .deadline
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until no configured server is still starting, and sums up (at once once the
    /// manager is closing: what was still starting then stays `starting`).
    pub async fn settled(&self) -> StartSummary {
        let mut changed = self.shared.changed.subscribe();
        loop {
            {
                let set = self.shared.set();
                if set.settled() {
                    let servers = set.reports();
                    let elapsed = servers
                        .iter()
                        .filter_map(|r| r.timeline.ready_at_ms.or(r.timeline.failed_at_ms))
                        .max()
                        .map_or(Duration::ZERO, Duration::from_millis);
                    return StartSummary {
                        deadline: self.deadline(),
                        elapsed,
                        servers,
                    };
                }
            }
            // Closing abandons the starts still in flight: nothing more will settle.
            let more = tokio::select! {
                changed = changed.changed() => changed.is_ok(),
                () = self.shared.closing.cancelled() => false,
            };
            if !more {
                return StartSummary {
                    deadline: self.deadline(),
                    elapsed: self.shared.t0().elapsed(),
                    servers: self.reports(),
                };
            }
        }
    }

    /// Waits until `server` has finished starting and returns its report (`None` when it is
    /// not configured).
    pub async fn wait_for(&self, server: &str) -> Option<ServerReport> {
        let mut changed = self.shared.changed.subscribe();
        loop {
            match self.shared.set().report(server) {
                None => return None,
                Some(r) if r.status != ServerStatus::Starting => return Some(r.clone()),
                Some(_) => {}
            }
            let more = tokio::select! {
                changed = changed.changed() => changed.is_ok(),
                () = self.shared.closing.cancelled() => false,
            };
            if !more {
                return self.shared.set().report(server).cloned();
            }
        }
    }

    /// Every configured server's report, in config order (`starting` for those not done).
    pub fn reports(&self) -> Vec<ServerReport> {
        self.shared.set().reports()
    }

    /// The stderr ring of a server (created on first use; it survives restarts).
    pub fn stderr_ring(&self, server: &str) -> Arc<StderrRing> {
        self.shared.stderr_ring(server)
    }

    /// The ready client of a server.
    pub fn client(&self, server: &str) -> Option<Arc<dyn McpClient>> {
        self.shared
            .set()
            .ready(server)
            .map(|s| s.client.clone() as Arc<dyn McpClient>)
    }

    /// Stops the supervisor (so nothing restarts behind it), abandons every start still in
    /// flight (its process group is killed), then closes every ready server, all at once; one
    /// failing close does not stop the others. Returns the failures, by server.
    pub async fn close_all(&self) -> Vec<(String, McpError)> {
        let shared = &self.shared;
        shared.watches.shutdown().await;
        shared.closing.cancel();
        let servers: Vec<(String, Arc<DefaultMcpClient>)> = shared.set().drain();
        let mut tasks =
            std::mem::take(&mut *shared.tasks.lock().unwrap_or_else(|e| e.into_inner()));
        let drained = async { while tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(ABANDONED_CLEANUP, drained)
            .await
            .is_err()
        {
            tracing::warn!("abandoned starts did not end in time");
        }
        // Their descendants are walked for all of them at once, before (while each tree hangs
        // together) and after (the orphans): one walk each way, not two per server. The exit
        // watchers walk for orphans too, but as tasks: a command that returns after this may
        // end the runtime before they run, so the walk after is done here, awaited.
        let trees = |servers: &[(String, Arc<DefaultMcpClient>)]| -> Vec<(Option<i32>, String)> {
            servers
                .iter()
                .filter_map(|(_, c)| c.process_tree())
                .collect()
        };
        let walk = |trees: &[(Option<i32>, String)]| {
            let trees: Vec<(Option<i32>, &str)> =
                trees.iter().map(|(l, m)| (*l, m.as_str())).collect();
            reaper::descendants_of_all(&trees)
        };
        let mut escaped = walk(&trees(&servers));
        let ended = servers.clone();
        let mut closing = JoinSet::new();
        for (name, client) in servers {
            closing.spawn(async move {
                let result = client.end().await;
                (name, result)
            });
        }
        let mut failures = Vec::new();
        while let Some(joined) = closing.join_next().await {
            match joined {
                Ok((name, Ok(()))) => shared.emit(McpEvent::ServerClosed { server: name }),
                Ok((name, Err(e))) => {
                    tracing::warn!(server = %name, error = %e, "close failed");
                    shared.emit(McpEvent::ServerClosed {
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
        if !ended.is_empty() {
            escaped.extend(walk(&trees(&ended)));
            reaper::end_escaped(&escaped).await;
        }
        failures
    }
}
