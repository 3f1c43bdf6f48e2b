//! Serving the demo server over this process's stdin/stdout.
//!
//! Separate from the handler because only here is "the connection" a pair of pipes: `--hang-init` is
//! done by reading stdin to its end without answering, so the process still notices the client leave.

use tokio::io::AsyncReadExt;

use super::{serve, DemoError, DemoOptions};

/// Serve MCP over stdin/stdout until stdin closes. Nothing but protocol is written to stdout.
pub async fn serve_stdio(opts: DemoOptions) -> Result<(), DemoError> {
    if opts.hang_init {
        return drain_stdin().await;
    }
    serve(opts, rmcp::transport::io::stdio()).await
}

/// Read and drop stdin until it closes.
async fn drain_stdin() -> Result<(), DemoError> {
    let mut stdin = tokio::io::stdin();
    let mut buf = vec![0u8; 8192];
    while stdin.read(&mut buf).await? != 0 {}
    Ok(())
}
