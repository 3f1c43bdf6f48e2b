//! The peers of the call-path benchmark (PEERS.md): server-everything as the server, and the
//! Python SDK client (`mcp==2.3.0`, in a venv under the target dir) as the client to beat.
//! Installed on first use and pinned, like the test peers, so `cargo bench` installs nothing by hand.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::report::CallStats;
use crate::ServerCmd;

/// The Python client SDK the benchmark measures against.
pub const PYTHON_SDK: &str = "mcp==2.3.0";

#[allow(dead_code)]
#[path = "../../tests/peers/mod.rs"]
mod test_peers;

fn run(cmd: &mut Command, what: &str) {
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) => panic!("cannot run {what}: {e} (is it installed? see .ci/run)"),
    };
    assert!(
        out.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// server-everything over stdio.
pub fn everything() -> ServerCmd {
    let script = test_peers::npm().join("@modelcontextprotocol/server-everything/dist/index.js");
    ServerCmd {
        command: "node".into(),
        args: vec![script.display().to_string(), "stdio".into()],
    }
}

/// The venv's python with the pinned SDK.
fn python() -> &'static Path {
    static DONE: OnceLock<PathBuf> = OnceLock::new();
    DONE.get_or_init(|| {
        let venv = test_peers::root().join("venv-client");
        let stamp = venv.join(".installed-mcp-2.3.0");
        if !stamp.exists() {
            std::fs::create_dir_all(test_peers::root()).expect("peers dir");
            run(
                Command::new("python3").args(["-m", "venv"]).arg(&venv),
                "python3 -m venv",
            );
            run(
                Command::new(venv.join("bin/pip")).args(["install", "-q", PYTHON_SDK]),
                "pip install",
            );
            std::fs::write(&stamp, b"").expect("stamp");
        }
        venv.join("bin/python")
    })
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
    let out = Command::new(python())
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
