//! One server's start outside a start-up: a restart by hand (`launch.rs`), a lazy server's first
//! call (`lazy.rs`). Under that server's own deadline, then `finish`, then its watch.

use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::join::{finish, start_timed};
use super::{startup_deadline, supervise, Shared};
use crate::config::ServerConfig;
use crate::mcp::events::{PhaseTimes, ServerReport};

/// Starts `config`'s server as start `epoch` (begun in the set by the caller).
pub(super) async fn start_one(
    shared: &Arc<Shared>,
    config: &ServerConfig,
    epoch: u64,
    cancel: CancellationToken,
) -> ServerReport {
    let deadline = startup_deadline(std::slice::from_ref(config), None);
    let phases = Arc::new(Mutex::new(PhaseTimes::default()));
    let (outcome, started_at) = start_timed(shared, config, phases, cancel, deadline).await;
    let joined = finish(shared, config, epoch, outcome, started_at).await;
    if let Some(client) = &joined.client {
        supervise::watch(shared, config, client);
    }
    joined.report
}
