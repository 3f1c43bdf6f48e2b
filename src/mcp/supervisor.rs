//! The supervisor: watches every ready server and, when one goes away by itself (its process
//! exits, its connection is lost), says so and, under `restart: on_failure`, starts it again
//! with exponential backoff until it has crashed too quickly too often in a row.
//!
//! This file holds the rule (backoff, give-up), the crash arithmetic and the bookkeeping of the
//! watch tasks; it knows nothing of the manager. The watch loop itself, which takes a server
//! out of the ready set and brings it back, is the manager's (`manager/supervise.rs`): a client
//! is one connection, and bringing a server back means a new process or session, a new tool list
//! and tools resolved again (seed §9.1).
//!
//! Stop protocol: every watch task selects on its own stop token (a child of the shutdown
//! token) at each wait, and checks it right before each change it makes to the manager, with
//! no wait in between. Whoever closes a server on purpose stops its watch and awaits the task
//! first (`stop` for a restart by hand, `shutdown` for `close_all`), so no restart ever races
//! a close.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::events::{FailureClass, ServerReport};
use crate::config::TransportKind;

/// How long a stopping watch task may take (it may be closing a dead client).
const STOP_WAIT: Duration = Duration::from_secs(5);

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

struct Watch {
    stop: CancellationToken,
    task: JoinHandle<()>,
}

/// The watch tasks of one manager and the crash counts of its servers.
pub(crate) struct Watches {
    shutdown: CancellationToken,
    /// Supervision is on (`McpClientManager::supervise`); servers that become ready from then
    /// on are watched.
    on: AtomicBool,
    tasks: Mutex<HashMap<String, Watch>>,
    crashes: Mutex<HashMap<String, Crashes>>,
    rule: RestartRule,
}

impl Default for Watches {
    fn default() -> Self {
        Watches {
            shutdown: CancellationToken::new(),
            on: AtomicBool::new(false),
            tasks: Mutex::new(HashMap::new()),
            crashes: Mutex::new(HashMap::new()),
            rule: RESTART_RULE,
        }
    }
}

impl Watches {
    /// Supervision starts: servers that become ready from now on are watched.
    pub(crate) fn switch_on(&self) {
        self.on.store(true, Ordering::SeqCst);
    }

    /// Starts the watch of `server` (replacing an older one), unless supervision is off or shut
    /// down: `task` gets the watch's stop token.
    pub(crate) fn watch(
        &self,
        server: &str,
        task: impl FnOnce(CancellationToken) -> JoinHandle<()>,
    ) {
        if !self.on.load(Ordering::SeqCst) || self.shutdown.is_cancelled() {
            return;
        }
        let stop = self.shutdown.child_token();
        let task = task(stop.clone());
        let old = self
            .tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(server.to_string(), Watch { stop, task });
        if let Some(old) = old {
            old.stop.cancel();
        }
    }

    /// Stops watching `server` (a restart by hand), waits for its task, and resets its counts.
    pub(crate) async fn stop(&self, server: &str) {
        let watch = self
            .tasks
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
    pub(crate) async fn shutdown(&self) {
        self.shutdown.cancel();
        let watches: Vec<Watch> = self
            .tasks
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
    pub(crate) fn crashes(&self, server: &str) -> Crashes {
        self.crashes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(server)
            .copied()
            .unwrap_or_default()
    }

    /// Changes the counts of `server` under the rule; returns them after the change.
    pub(crate) fn count(
        &self,
        server: &str,
        change: impl FnOnce(&mut Crashes, &RestartRule),
    ) -> Crashes {
        let mut all = self.crashes.lock().unwrap_or_else(|e| e.into_inner());
        let entry = all.entry(server.to_string()).or_default();
        change(entry, &self.rule);
        *entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServerConfig;
    use crate::mcp::events::{Failure, PhaseTimes};

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
        let config = ServerConfig::remote("s", TransportKind::StreamableHttp, "http://h/mcp");
        ServerReport::failed(
            &config,
            PhaseTimes::default(),
            Failure {
                class,
                phase: None,
                message: String::new(),
                exit_status: None,
                stderr_tail: Vec::new(),
                http_status: None,
            },
        )
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
        // Reached, then dropped mid-answer: it is back, and broken.
        assert!(counts_as_crash(
            StreamableHttp,
            &failed(FailureClass::ConnectionLost)
        ));
    }
}
