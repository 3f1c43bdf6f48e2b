//! The mark every process the console starts carries in its environment (`AIMON_CONSOLE_SERVER`,
//! inherited by its descendants): `<console pid>-<n>`. MCP servers (`mcp/transport/process.rs`)
//! and model endpoints (`agent/endpoint.rs`) carry it, so that what escapes a process group is
//! found by it, and a daemon started after one that was killed ends what that one left
//! (`mcp::transport::reaper::end_leftovers_of`).
//!
//! At the floor, like `text.rs`: the agent layer, which may not import `mcp`, starts endpoints.

use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that holds the mark.
pub const NAME: &str = "AIMON_CONSOLE_SERVER";

static STARTED: AtomicU64 = AtomicU64::new(0);

/// A new mark: this process's id and how many processes it marked before.
pub fn next() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        STARTED.fetch_add(1, Ordering::Relaxed)
    )
}
