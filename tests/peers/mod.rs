//! Installs the third-party MCP servers of PEERS.md on first use, pinned, under the target dir,
//! so `cargo test` alone passes on a fresh machine. A failed install fails the test: a missing
//! peer is a failure, never a skip.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub const SERVER_EVERYTHING: &str = "@modelcontextprotocol/server-everything@2026.8.31";
pub const SERVER_FILESYSTEM: &str = "@modelcontextprotocol/server-filesystem@2026.8.31";
pub const MCP_SERVER_TIME: &str = "mcp-server-time==2026.10.19";

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

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}
