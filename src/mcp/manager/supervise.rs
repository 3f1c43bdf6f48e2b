//! The supervisor's watch loop: wait for a ready server's connection to end; if it ended by
//! itself, take it out of the ready set, say so, and bring it back as its `restart` policy
//! says, with the backoff and give-up rule of `supervisor.rs`.
//!
//! The loop holds the manager's shared state weakly: it must not keep a closed manager alive.

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime};

use tokio_util::sync::CancellationToken;

use super::join::{finish, mark_restart, start_timed};
use super::{startup_deadline, Shared};
use crate::config::{RestartPolicy, ServerConfig};
use crate::mcp::client::{DefaultMcpClient, McpClient};
use crate::mcp::events::{McpEvent, PhaseTimes, ServerStatus};
use crate::mcp::supervisor::{counts_as_crash, NextStep};

/// After a lost connection, how long to wait for the process to be seen exiting.
const EXIT_SETTLE: Duration = Duration::from_millis(300);

/// Starts watching a server that just joined (nothing when supervision is off or shut down).
pub(super) fn watch(shared: &Arc<Shared>, config: &ServerConfig, client: &Arc<DefaultMcpClient>) {
    let weak = Arc::downgrade(shared);
    let config = config.clone();
    let client_weak = Arc::downgrade(client);
    let ended = client.ended_owned();
    shared.watches.watch(&config.name.clone(), move |stop| {
        tokio::spawn(supervise(weak, config, client_weak, ended, stop))
    });
}

/// One server's watch: wait for the connection to end; if it ended by itself, report it and
/// bring the server back as its restart policy says; then watch the new connection.
async fn supervise(
    shared: Weak<Shared>,
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
        let (Some(m), Some(dead)) = (shared.upgrade(), client.upgrade()) else {
            return;
        };
        if stop.is_cancelled() || !m.set().take_if_current(&config.name, &dead) {
            return;
        }
        let exit = match dead.process() {
            Some(process) => process.wait_exit(EXIT_SETTLE).await,
            None => None,
        };
        let uptime = ready_at.elapsed();
        let crashes = m
            .watches
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
        let Some(new) = bring_back(&shared, &config, &stop).await else {
            return;
        };
        client = Arc::downgrade(&new);
        ended = Box::pin(new.ended_owned());
        ready_at = Instant::now();
    }
}

/// Restart attempts with backoff until one is ready (returned, joined), the supervisor gives
/// up, or the watch is stopped (`None` for both).
async fn bring_back(
    shared: &Weak<Shared>,
    config: &ServerConfig,
    stop: &CancellationToken,
) -> Option<Arc<DefaultMcpClient>> {
    loop {
        if stop.is_cancelled() {
            return None;
        }
        let m = shared.upgrade()?;
        let mut next = NextStep::GiveUp;
        let crashes = m.watches.count(&config.name, |c, rule| next = c.next(rule));
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
        let m = shared.upgrade()?;
        if stop.is_cancelled() {
            return None;
        }
        let (epoch, cancel) = m.set().begin(&config.name, &m.closing);
        mark_restart(
            &m,
            &config.name,
            &format!("──── restarted by the supervisor (attempt {attempt}) ────"),
        );
        let deadline = startup_deadline(std::slice::from_ref(config), None);
        let phases = Arc::new(Mutex::new(PhaseTimes::default()));
        // Dropping an unfinished start kills what it spawned (the process group goes with it).
        let (outcome, started_at) = tokio::select! {
            biased;
            () = stop.cancelled() => {
                cancel.cancel();
                return None;
            }
            started = start_timed(&m, config, phases, cancel.clone(), deadline) => started,
        };
        if stop.is_cancelled() {
            // The restart by hand or the close that stopped us owns the server now.
            if let crate::mcp::start::StartOutcome::Ready { client, .. } = outcome {
                let _ = client.close().await;
            }
            return None;
        }
        // This loop keeps watching a server it brought back: no new watch.
        let joined = finish(&m, config, epoch, outcome, started_at).await;
        if let Some(client) = joined.client {
            return Some(client);
        }
        match joined.report.status {
            // Ready, but overtaken by a restart by hand, which owns the server now.
            ServerStatus::Ready => return None,
            ServerStatus::Failed
            | ServerStatus::Starting
            | ServerStatus::Disabled
            | ServerStatus::Idle => {
                let crashed = counts_as_crash(config.transport, &joined.report);
                m.watches
                    .count(&config.name, |c, _| c.start_failed(crashed));
            }
        }
    }
}
