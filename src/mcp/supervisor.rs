//! The supervisor: watches every ready server and, when one goes away by itself (its process
//! exits, its connection is lost), says so and, under `restart: on_failure`, starts it again
//! with exponential backoff until it has crashed too quickly too often in a row.
//!
//! Reconnection lives here, beside the manager that owns every server's lifecycle, and not in
//! the client (seed §9.1): a client is one connection, and bringing a server back means a new
//! process or session, a new tool list and tools resolved again — the manager's work. Separate
//! from `manager.rs` because the watch tasks, their stop protocol and the crash arithmetic are a
//! seam of their own.
//!
//! Stop protocol: every watch task selects on its own stop token (a child of the shutdown
//! token) at each wait, and checks it right before each change it makes to the manager, with
//! no wait in between. Whoever closes a server on purpose stops its watch and awaits the task
//! first (`stop` for a restart by hand, `shutdown` for `close_all`), so no restart ever races
//! a close.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant, SystemTime};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::client::{DefaultMcpClient, McpClient};
use super::events::{FailureClass, McpEvent, ServerReport};
use super::manager::{McpClientManager, ReadyServer};
use super::start::StartOutcome;
use crate::config::{RestartPolicy, ServerConfig, TransportKind};
use crate::tool::ToolRegistry;

/// How long a stopping watch task may take (it may be closing a dead client).
const STOP_WAIT: Duration = Duration::from_secs(5);
/// After a lost connection, how long to wait for the process to be seen exiting.
const EXIT_SETTLE: Duration = Duration::from_millis(300);

/// The backoff and the give-up rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartRule {
    /// The delay before the first restart attempt; each further attempt doubles it.
    pub first_delay: Duration,
    /// The longest delay.
    pub max_delay: Duration,
    /// A server that goes down within this long of becoming ready crashed quickly.
    pub quick_window: Duration,
    /// After this many quick crashes in a row the supervisor gives up.
    pub give_up_after: u32,
}

/// The rule the console uses: 250 ms doubling to 30 s; 5 crashes within 30 s of start in a row.
pub const RESTART_RULE: RestartRule = RestartRule {
    first_delay: Duration::from_millis(250),
    max_delay: Duration::from_secs(30),
    quick_window: Duration::from_secs(30),
    give_up_after: 5,
};

impl RestartRule {
    /// The delay before restart attempt `attempt` (1-based): `first_delay` doubled for each
    /// attempt before it, capped at `max_delay`.
    pub fn delay(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(31);
        self.first_delay
            .saturating_mul(1_u32 << doublings)
            .min(self.max_delay)
    }
}

/// A server's crash counts since it was started or last restarted by hand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Crashes {
    /// Every crash: each time it went down by itself, and each restart attempt that counted.
    pub total: u32,
    /// Quick crashes in a row: down within the quick window of becoming ready, or a restart
    /// attempt that failed (for an HTTP server, one that reached it: an attempt that could not
    /// connect at all does not count). At `give_up_after` the supervisor gives up.
    pub in_a_row: u32,
    /// Restart attempts since the server was last up past the quick window (drives the backoff).
    pub attempts: u32,
    /// The supervisor gave up; the server stays down until restarted by hand.
    pub gave_up: bool,
}

/// What the supervisor does after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextStep {
    /// Try again after `delay`; `attempt` is 1-based.
    Restart { attempt: u32, delay: Duration },
    /// Stop trying.
    GiveUp,
}

impl Crashes {
    /// A ready server went down after `uptime`.
    pub fn went_down(&mut self, uptime: Duration, rule: &RestartRule) {
        self.total += 1;
        if uptime < rule.quick_window {
            self.in_a_row += 1;
        } else {
            self.in_a_row = 0;
            self.attempts = 0;
        }
    }

    /// A restart attempt failed; `crashed` says whether it counts as a crash.
    pub fn start_failed(&mut self, crashed: bool) {
        if crashed {
            self.total += 1;
            self.in_a_row += 1;
        }
    }

    /// The next step after a failure, counting the attempt it schedules.
    pub fn next(&mut self, rule: &RestartRule) -> NextStep {
        if self.in_a_row >= rule.give_up_after {
            self.gave_up = true;
            return NextStep::GiveUp;
        }
        self.attempts += 1;
        NextStep::Restart {
            attempt: self.attempts,
            delay: rule.delay(self.attempts),
        }
    }
}

/// Whether a failed restart attempt counts as a crash: it does, unless an HTTP server could not
/// be reached at all (it is not back yet; the backoff keeps growing to its cap meanwhile).
pub fn counts_as_crash(transport: TransportKind, report: &ServerReport) -> bool {
    let Some(failure) = &report.failure else {
        return true;
    };
    // A connect that timed out is not back yet either.
    let unreachable = failure.class.is_unreachable() || failure.class == FailureClass::Timeout;
    !(transport.is_http() && unreachable)
}

/// What the supervisor needs from the runtime: the manager (weakly: the watch tasks must not
/// keep it alive) and the registry the servers' tools live in.
struct Attached {
    manager: Weak<McpClientManager>,
    registry: Arc<ToolRegistry>,
}

struct Watch {
    stop: CancellationToken,
    task: JoinHandle<()>,
}

/// The watch tasks of one manager and the crash counts of its servers.
pub(super) struct Supervisor {
    shutdown: CancellationToken,
    attached: OnceLock<Attached>,
    watches: Mutex<HashMap<String, Watch>>,
    crashes: Mutex<HashMap<String, Crashes>>,
    rule: RestartRule,
}

impl Default for Supervisor {
    fn default() -> Self {
        Supervisor {
            shutdown: CancellationToken::new(),
            attached: OnceLock::new(),
            watches: Mutex::new(HashMap::new()),
            crashes: Mutex::new(HashMap::new()),
            rule: RESTART_RULE,
        }
    }
}

impl Supervisor {
    /// Supervision starts: servers that become ready from now on are watched. Only the first
    /// call counts.
    pub(super) fn attach(&self, manager: Weak<McpClientManager>, registry: Arc<ToolRegistry>) {
        let _ = self.attached.set(Attached { manager, registry });
    }

    /// The registry tools are re-registered in, once attached.
    pub(super) fn registry(&self) -> Option<&Arc<ToolRegistry>> {
        self.attached.get().map(|a| &a.registry)
    }

    /// Watches a server that just became ready (nothing before `attach` or after `shutdown`).
    pub(super) fn watch(&self, config: &ServerConfig, client: &Arc<DefaultMcpClient>) {
        let Some(attached) = self.attached.get() else {
            return;
        };
        if self.shutdown.is_cancelled() {
            return;
        }
        let stop = self.shutdown.child_token();
        let task = tokio::spawn(supervise(
            attached.manager.clone(),
            config.clone(),
            Arc::downgrade(client),
            client.ended_owned(),
            stop.clone(),
        ));
        let old = self
            .watches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(config.name.clone(), Watch { stop, task });
        if let Some(old) = old {
            old.stop.cancel();
        }
    }

    /// Stops watching `server` (a restart by hand), waits for its task, and resets its counts.
    pub(super) async fn stop(&self, server: &str) {
        let watch = self
            .watches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(server);
        if let Some(watch) = watch {
            watch.stop.cancel();
            let _ = tokio::time::timeout(STOP_WAIT, watch.task).await;
        }
        self.crashes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(server);
    }

    /// Stops every watch for good and waits for the tasks (first step of `close_all`).
    pub(super) async fn shutdown(&self) {
        self.shutdown.cancel();
        let watches: Vec<Watch> = self
            .watches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(_, w)| w)
            .collect();
        for watch in watches {
            let _ = tokio::time::timeout(STOP_WAIT, watch.task).await;
        }
    }

    /// The crash counts of `server`.
    pub(super) fn crashes(&self, server: &str) -> Crashes {
        self.crashes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(server)
            .copied()
            .unwrap_or_default()
    }

    fn count(&self, server: &str, change: impl FnOnce(&mut Crashes, &RestartRule)) -> Crashes {
        let mut all = self.crashes.lock().unwrap_or_else(|e| e.into_inner());
        let entry = all.entry(server.to_string()).or_default();
        change(entry, &self.rule);
        *entry
    }
}

/// The manager's side of supervision: a server leaving the ready set, and coming back.
impl McpClientManager {
    /// Removes `client` from the ready set if it is still `server`'s client (the supervisor,
    /// when it went away by itself). Its tools stay registered and answer `disconnected`.
    fn take_if_current(&self, server: &str, client: &Arc<DefaultMcpClient>) -> bool {
        let mut ready = self.ready.lock().unwrap_or_else(|e| e.into_inner());
        match ready.get(server) {
            Some(s) if Arc::ptr_eq(&s.client, client) => {
                ready.remove(server);
                true
            }
            Some(_) | None => false,
        }
    }

    /// A server the supervisor brought back: it joins the ready set and its tools, resolved
    /// anew, replace the old ones in one step.
    fn install(
        &self,
        config: &ServerConfig,
        client: Arc<DefaultMcpClient>,
        tools: Vec<rmcp::model::Tool>,
        report: ServerReport,
    ) {
        self.ready.lock().unwrap_or_else(|e| e.into_inner()).insert(
            config.name.clone(),
            ReadyServer {
                client,
                config: config.clone(),
                tools,
            },
        );
        if let Some(registry) = self.supervisor.registry() {
            let prefix = format!("mcp__{}__", config.name);
            for dup in registry.replace_prefixed(&prefix, self.build_tools(&config.name)) {
                tracing::warn!(server = %config.name, tool = %dup.0, "tool not registered: name taken");
            }
        }
        self.store_report(report);
    }
}

/// One server's watch: wait for the connection to end; if it ended by itself, report it and
/// bring the server back as its restart policy says; then watch the new connection.
async fn supervise(
    manager: Weak<McpClientManager>,
    config: ServerConfig,
    mut client: Weak<DefaultMcpClient>,
    ended: tokio_util::sync::WaitForCancellationFutureOwned,
    stop: CancellationToken,
) {
    let mut ended = Box::pin(ended);
    let mut ready_at = Instant::now();
    loop {
        tokio::select! {
            biased;
            () = stop.cancelled() => return,
            () = &mut ended => {}
        }
        // Closed on purpose (dropped, or no longer the server's client): nothing to do.
        let (Some(m), Some(dead)) = (manager.upgrade(), client.upgrade()) else {
            return;
        };
        if stop.is_cancelled() || !m.take_if_current(&config.name, &dead) {
            return;
        }
        let exit = match dead.process() {
            Some(process) => process.wait_exit(EXIT_SETTLE).await,
            None => None,
        };
        let uptime = ready_at.elapsed();
        let crashes = m
            .supervisor
            .count(&config.name, |c, rule| c.went_down(uptime, rule));
        let reason = match (exit, config.transport.is_http()) {
            (Some(info), _) => format!("the server exited ({info})"),
            (None, false) => "the server closed its stdout".to_string(),
            (None, true) => "the connection to the server was lost".to_string(),
        };
        tracing::warn!(server = %config.name, %reason, ?uptime, "server down");
        m.emit(McpEvent::ServerDown {
            server: config.name.clone(),
            exit,
            reason,
            at: SystemTime::now(),
            uptime,
            crashes: crashes.in_a_row,
            restart: config.restart,
        });
        // Reap it (the process group, the HTTP session); its tools stay registered and answer
        // `disconnected` until it is back.
        let _ = dead.close().await;
        drop((m, dead));
        match config.restart {
            RestartPolicy::Never => return,
            RestartPolicy::OnFailure => {}
        }
        let Some(new) = bring_back(&manager, &config, &stop).await else {
            return;
        };
        client = Arc::downgrade(&new);
        ended = Box::pin(new.ended_owned());
        ready_at = Instant::now();
    }
}

/// Restart attempts with backoff until one is ready (returned, installed), the supervisor
/// gives up, or the watch is stopped (`None` for both).
async fn bring_back(
    manager: &Weak<McpClientManager>,
    config: &ServerConfig,
    stop: &CancellationToken,
) -> Option<Arc<DefaultMcpClient>> {
    loop {
        if stop.is_cancelled() {
            return None;
        }
        let m = manager.upgrade()?;
        let mut next = NextStep::GiveUp;
        let crashes = m
            .supervisor
            .count(&config.name, |c, rule| next = c.next(rule));
        let (attempt, delay) = match next {
            NextStep::GiveUp => {
                tracing::warn!(server = %config.name, crashes = crashes.in_a_row, "gave up restarting");
                m.emit(McpEvent::GaveUp {
                    server: config.name.clone(),
                    crashes: crashes.in_a_row,
                });
                return None;
            }
            NextStep::Restart { attempt, delay } => (attempt, delay),
        };
        m.emit(McpEvent::RestartScheduled {
            server: config.name.clone(),
            attempt,
            delay,
            crashes: crashes.in_a_row,
        });
        drop(m);
        tokio::select! {
            biased;
            () = stop.cancelled() => return None,
            () = tokio::time::sleep(delay) => {}
        }
        let m = manager.upgrade()?;
        let marker = format!("──── restarted by the supervisor (attempt {attempt}) ────");
        // Dropping an unfinished start kills what it spawned (the process group goes with it).
        let outcome = tokio::select! {
            biased;
            () = stop.cancelled() => return None,
            outcome = m.start_alone(config, &marker) => outcome,
        };
        match outcome {
            StartOutcome::Ready {
                client,
                tools,
                report,
            } => {
                if stop.is_cancelled() {
                    let _ = client.close().await;
                    return None;
                }
                m.install(config, client.clone(), tools, *report);
                return Some(client);
            }
            StartOutcome::Failed(report) => {
                let crashed = counts_as_crash(config.transport, &report);
                m.supervisor
                    .count(&config.name, |c, _| c.start_failed(crashed));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::events::{Failure, PhaseTimes, ServerStatus};

    #[test]
    fn backoff_doubles_from_250ms_to_a_30s_cap() {
        let delays: Vec<u64> = (1..=10)
            .map(|n| RESTART_RULE.delay(n).as_millis() as u64)
            .collect();
        assert_eq!(
            delays,
            [250, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]
        );
        assert_eq!(RESTART_RULE.delay(0), Duration::from_millis(250));
        assert_eq!(RESTART_RULE.delay(u32::MAX), Duration::from_secs(30));
    }

    #[test]
    fn five_quick_crashes_in_a_row_give_up() {
        let quick = Duration::from_secs(1);
        let mut c = Crashes::default();
        let mut steps = Vec::new();
        for _ in 0..5 {
            c.went_down(quick, &RESTART_RULE);
            steps.push(c.next(&RESTART_RULE));
        }
        let ms = Duration::from_millis;
        assert_eq!(
            steps,
            [
                NextStep::Restart {
                    attempt: 1,
                    delay: ms(250)
                },
                NextStep::Restart {
                    attempt: 2,
                    delay: ms(500)
                },
                NextStep::Restart {
                    attempt: 3,
                    delay: ms(1_000)
                },
                NextStep::Restart {
                    attempt: 4,
                    delay: ms(2_000)
                },
                NextStep::GiveUp,
            ]
        );
        assert_eq!((c.total, c.in_a_row, c.gave_up), (5, 5, true));
    }

    #[test]
    fn a_server_that_stayed_up_starts_the_count_and_the_backoff_over() {
        let mut c = Crashes::default();
        for _ in 0..4 {
            c.went_down(Duration::from_secs(1), &RESTART_RULE);
            c.next(&RESTART_RULE);
        }
        c.went_down(RESTART_RULE.quick_window, &RESTART_RULE);
        assert_eq!((c.total, c.in_a_row), (5, 0));
        assert_eq!(
            c.next(&RESTART_RULE),
            NextStep::Restart {
                attempt: 1,
                delay: Duration::from_millis(250)
            }
        );
    }

    #[test]
    fn failed_attempts_grow_the_backoff_and_count_unless_unreachable() {
        let mut c = Crashes::default();
        c.went_down(Duration::from_secs(1), &RESTART_RULE);
        c.next(&RESTART_RULE);
        // An HTTP server that is not back yet: the backoff grows to its cap, no give-up.
        for _ in 0..20 {
            c.start_failed(false);
            c.next(&RESTART_RULE);
        }
        assert_eq!((c.in_a_row, c.gave_up), (1, false));
        assert_eq!(RESTART_RULE.delay(c.attempts), RESTART_RULE.max_delay);
        // Attempts that reach the server and fail are crashes.
        for _ in 0..4 {
            c.start_failed(true);
        }
        assert_eq!(c.next(&RESTART_RULE), NextStep::GiveUp);
    }

    fn failed(class: FailureClass) -> ServerReport {
        ServerReport {
            name: "s".into(),
            transport: TransportKind::StreamableHttp,
            status: ServerStatus::Failed,
            protocol_version: None,
            server_info: None,
            phases: PhaseTimes::default(),
            tools: 0,
            warnings: Vec::new(),
            failure: Some(Failure {
                class,
                phase: None,
                message: String::new(),
                exit_status: None,
                stderr_tail: Vec::new(),
                http_status: None,
            }),
        }
    }

    #[test]
    fn only_an_unreachable_http_server_is_not_a_crash() {
        use TransportKind::{Sse, Stdio, StreamableHttp};
        let refused = failed(FailureClass::ConnectRefused);
        assert!(!counts_as_crash(StreamableHttp, &refused));
        assert!(!counts_as_crash(Sse, &failed(FailureClass::DnsError)));
        assert!(!counts_as_crash(
            StreamableHttp,
            &failed(FailureClass::Timeout)
        ));
        assert!(counts_as_crash(Stdio, &refused));
        assert!(counts_as_crash(
            StreamableHttp,
            &failed(FailureClass::HttpStatus)
        ));
        assert!(counts_as_crash(Stdio, &failed(FailureClass::Exited)));
    }
}
