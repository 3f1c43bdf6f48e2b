//! The peers of the call-path benchmark (PEERS.md): server-everything as the server, and the
//! Python SDK client (`mcp==2.3.0`, in a venv under the target dir) as the client to beat.
//! Installed on first use from the pinned trees of `tests/peers/`, like the test peers, so `cargo bench`
//! installs nothing by hand.

use std::path::Path;
use std::process::Command;

use serde::Deserialize;

use crate::report::CallStats;
use crate::ServerCmd;

#[path = "../../tests/peers/mod.rs"]
mod test_peers;

/// server-everything over stdio.
pub fn everything() -> ServerCmd {
    let script = test_peers::npm().join("@modelcontextprotocol/server-everything/dist/index.js");
    ServerCmd {
        command: "node".into(),
        args: vec![script.display().to_string(), "stdio".into()],
    }
}

#[derive(Deserialize)]
struct PeerOutput {
    calls: usize,
    seconds: f64,
    latencies_s: Vec<f64>,
}

/// The Python SDK client making `calls` sequential calls of `tool` against `server`.
pub fn python_client(
    server: &ServerCmd,
    calls: usize,
    warmup: usize,
    tool: &str,
    arguments: &serde_json::Value,
) -> CallStats {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peer_client.py");
    let out = Command::new(test_peers::sdk())
        .arg(script)
        .arg(calls.to_string())
        .arg(warmup.to_string())
        .arg(tool)
        .arg(arguments.to_string())
        .arg(&server.command)
        .args(&server.args)
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) => panic!("cannot run the Python peer client: {e}"),
    };
    assert!(
        out.status.success(),
        "the Python peer client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let parsed: PeerOutput = match serde_json::from_slice(&out.stdout) {
        Ok(p) => p,
        Err(e) => panic!(
            "the Python peer client printed no result ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        ),
    };
    CallStats::new(
        parsed.calls,
        std::time::Duration::from_secs_f64(parsed.seconds),
        parsed
            .latencies_s
            .into_iter()
            .map(std::time::Duration::from_secs_f64)
            .collect(),
    )
}
