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
    let mut cmd = Command::new(test_peers::sdk());
    cmd.arg(script("peer_client.py"))
        .arg(calls.to_string())
        .arg(warmup.to_string())
        .arg(tool)
        .arg(arguments.to_string())
        .arg(&server.command)
        .args(&server.args);
    let parsed: PeerOutput = run("the Python peer client", &mut cmd);
    stats(parsed)
}

/// The Python SDK client holding sessions with `a` and `b` at once and alternating blocks of
/// `block` sequential calls between them for `rounds` rounds (`benches/peer_pair.py`), so that
/// both sides are measured at the same moments of the machine.
pub fn python_pair(
    (a, tool_a): (&ServerCmd, &str),
    (b, tool_b): (&ServerCmd, &str),
    (rounds, block, warmup): (usize, usize, usize),
    arguments: &serde_json::Value,
) -> (CallStats, CallStats) {
    let mut cmd = Command::new(test_peers::sdk());
    cmd.arg(script("peer_pair.py"))
        .args([rounds, block, warmup].map(|n| n.to_string()))
        .args([tool_a, tool_b])
        .arg(arguments.to_string())
        .arg("--")
        .arg(&a.command)
        .args(&a.args)
        .arg("--")
        .arg(&b.command)
        .args(&b.args);
    #[derive(Deserialize)]
    struct Pair {
        a: PeerOutput,
        b: PeerOutput,
    }
    let parsed: Pair = run("the paired Python client", &mut cmd);
    (stats(parsed.a), stats(parsed.b))
}

fn script(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches")
        .join(name)
}

/// Runs `cmd` (`what`, for failures) to its end: the JSON it printed.
fn run<T: serde::de::DeserializeOwned>(what: &str, cmd: &mut Command) -> T {
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) => panic!("cannot run {what}: {e}"),
    };
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    match serde_json::from_slice(&out.stdout) {
        Ok(parsed) => parsed,
        Err(e) => panic!(
            "{what} printed no result ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        ),
    }
}

fn stats(side: PeerOutput) -> CallStats {
    CallStats::new(
        side.calls,
        std::time::Duration::from_secs_f64(side.seconds),
        side.latencies_s
            .into_iter()
            .map(std::time::Duration::from_secs_f64)
            .collect(),
    )
}
