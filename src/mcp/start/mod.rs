//! The start of one server, phase by phase (spawn or connect, handshake, tools listed), and the
//! classification of whatever goes wrong into a `FailureClass` with the evidence attached.
//!
//! `starter.rs` keeps a start's phase times and builds its report (the tools-listed phase is
//! the same for every transport); `stdio.rs` spawns and speaks to a process, `remote.rs`
//! connects over Streamable HTTP or legacy SSE. The manager decides what a finished start
//! means (joining the ready set, or a failure on screen): nothing here publishes a report.

mod remote;
mod starter;
mod stdio;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

pub use self::starter::StartOutcome;
use self::starter::Starter;
use super::client::ClientOptions;
use super::events::{EventSink, FailureClass, PhaseTimes, StartPhase};
use super::notify::NotificationTap;
use super::session::SessionLinks;
use super::transport::stderr::StderrRing;
use crate::config::{ServerConfig, TransportKind};

/// Starts one server. Its phase times are kept in `phases` as they end (the manager reads them
/// when it stops a start at the deadline). Cancelling `cancel` abandons the start (the process
/// group is killed, the connection dropped); so does dropping the future.
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
    let mut links = SessionLinks::new(&config.name, sink.clone());
    if config.start == crate::config::StartMode::Lazy {
        links = links.keeping_list(config);
    }
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
                "abandoned: the start was stopped".into(),
                None,
            ).await
        }
    }
}

async fn start_inner(starter: &Starter<'_>, tap: NotificationTap) -> StartOutcome {
    match starter.config.transport {
        TransportKind::Stdio => stdio::start_stdio(starter, tap).await,
        TransportKind::StreamableHttp => remote::start_streamable_http(starter, tap).await,
        TransportKind::Sse => remote::start_sse(starter, tap).await,
    }
}
