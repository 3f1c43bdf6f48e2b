//! Serving the demo server over this process's stdin/stdout.
//!
//! Separate from the handler because only here is "the connection" a pair of pipes: `--hang-init` is
//! done by reading stdin to its end without answering, so the process still notices the client leave,
//! and the wire faults (`wire.rs`) sit between the pipes and the server.

use tokio::io::AsyncReadExt;

use super::wire::{inbound, outbound, WireFaults};
use super::{serve, DemoError, DemoOptions};

/// Size of the in-process pipes between the wire faults and the server.
const PIPE_BYTES: usize = 64 * 1024;

/// Serve MCP over stdin/stdout until stdin closes. Nothing but protocol is written to stdout.
pub async fn serve_stdio(opts: DemoOptions, wire: WireFaults) -> Result<(), DemoError> {
    if opts.hang_init {
        return drain_stdin().await;
    }
    if !wire.any() {
        return serve(opts, rmcp::transport::io::stdio()).await;
    }
    let (server_in, wire_in) = tokio::io::duplex(PIPE_BYTES);
    let (wire_out, server_out) = tokio::io::duplex(PIPE_BYTES);
    let asked = std::sync::Arc::default();
    tokio::spawn(inbound(
        tokio::io::stdin(),
        wire_in,
        wire.clone(),
        std::sync::Arc::clone(&asked),
    ));
    let answers = tokio::spawn(outbound(wire_out, tokio::io::stdout(), wire, asked));
    let served = serve(opts, (server_in, server_out)).await;
    // What the server wrote last still goes out.
    let _ = answers.await;
    served
}

/// Read and drop stdin until it closes.
async fn drain_stdin() -> Result<(), DemoError> {
    let mut stdin = tokio::io::stdin();
    let mut buf = vec![0u8; 8192];
    while stdin.read(&mut buf).await? != 0 {}
    Ok(())
}
