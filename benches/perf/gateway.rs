//! `gateway`: a host's calls through the gateway against the same host's calls straight to the
//! server, in the same run. The host is the Python SDK client (`benches/peer_client.py`), the
//! server the demo server; through the gateway it is `aimon-console serve --stdio` on a config
//! of that one server (host → gateway → demo server: one more hop, and the gate). Rounds
//! alternate so that the machine's noise falls on both alike; then one host holding both
//! sessions alternates blocks of calls between them (`benches/peer_pair.py`), the two measured
//! at the same moments. And the memory each connected host costs `serve --http`, beside what a
//! session costs the demo server over HTTP.

use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::http::{BareHttp, HttpDemo};
use crate::peer;
use crate::report::{call_rows, CallStats, Row};
use crate::ServerCmd;

/// The gateway's config: the demo server as `notes`, its annotations trusted.
fn config(binary: &str, dir: &Path) -> std::path::PathBuf {
    let config = dir.join("gateway.yaml");
    let written = std::fs::write(
        &config,
        format!(
            "mcp:\n  servers:\n    - name: notes\n      command: {binary}\n      args: [demo-server]\n      annotation_trust: trust\n"
        ),
    );
    if let Err(e) = written {
        panic!("cannot write {}: {e}", config.display());
    }
    config
}

pub fn rows(binary: &str, dir: &Path, calls: usize) -> Vec<Row> {
    let config = config(binary, dir);
    let direct = ServerCmd {
        command: binary.into(),
        args: vec!["demo-server".into()],
    };
    let through = ServerCmd {
        command: binary.into(),
        args: vec![
            "--config".into(),
            config.display().to_string(),
            "--log-file".into(),
            dir.join("gateway.log").display().to_string(),
            "serve".into(),
            "--stdio".into(),
        ],
    };
    let arguments = json!({"text": "hello"});
    let warmup = (calls / 10).max(20);
    let (mut straight, mut gateway) = (CallStats::default(), CallStats::default());
    for _ in 0..3 {
        straight.merge(peer::python_client(
            &direct, calls, warmup, "echo", &arguments,
        ));
        gateway.merge(peer::python_client(
            &through,
            calls,
            warmup,
            "notes__echo",
            &arguments,
        ));
    }
    let mut rows = call_rows(
        "gateway",
        "Python SDK host, sequential",
        &gateway,
        "the same host straight to the demo server",
        &straight,
    );
    rows[0] = rows[0].clone().at_least(0.8);
    // The same host with both sessions open, alternating blocks of calls: both sides at the
    // same moments of the machine, whose speed moves by half between rounds. Reported beside
    // the row above, which keeps its target.
    let block = 50;
    let (through_paired, straight_paired) = peer::python_pair(
        (&through, "notes__echo"),
        (&direct, "echo"),
        (3 * calls / block, block, warmup),
        &arguments,
    );
    rows.extend(call_rows(
        "gateway",
        &format!("Python SDK host, sequential, paired: blocks of {block} calls alternating"),
        &through_paired,
        "the same host's other session, straight to the demo server",
        &straight_paired,
    ));
    rows
}

/// The revision the memory rows' hosts speak: one with sessions (`initialize`).
const SESSION_REVISION: &str = "2025-11-25";

/// Memory per connected host: the resident set of `serve --http` before and after `hosts`
/// more hosts connect (each an `initialize` on a connection of its own, kept open), against
/// the same for `demo-server --http` (rmcp's session stack alone) in the same run. Reported,
/// with no target.
pub fn memory_rows(binary: &str, dir: &Path, hosts: usize) -> Vec<Row> {
    let config = config(binary, dir);
    let state = dir.join("gateway-state");
    let mut serve = match Command::new(binary)
        .args(["--config", &config.display().to_string()])
        .args([
            "--log-file",
            &dir.join("gateway-http.log").display().to_string(),
        ])
        .args(["serve", "--http", "127.0.0.1:0"])
        .env("XDG_STATE_HOME", &state)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => panic!("serve --http: {e}"),
    };
    let mut said = String::new();
    if let Some(err) = serve.stderr.take() {
        let _ = std::io::BufReader::new(err).read_line(&mut said);
    }
    let url = said
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("serve --http said {said:?}"))
        .to_string();
    let token = match Command::new(binary)
        .arg("gateway-token")
        .env("XDG_STATE_HOME", &state)
        .output()
    {
        Ok(out) => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        Err(e) => panic!("gateway-token: {e}"),
    };
    let gateway = per_session_kib(serve.id(), &url, Some(&token), hosts);
    let _ = serve.kill();
    let _ = serve.wait();
    let demo = HttpDemo::start(binary);
    let reference = per_session_kib(demo.pid(), &demo.url, None, hosts);
    vec![Row::new(
        "gateway",
        &format!("{hosts} hosts connected over HTTP"),
        "KiB per host",
        gateway,
    )
    .against("demo-server --http, per session", reference)]
}

/// How much `pid`'s resident set grows per session as `n` sessions open on `url` (after two
/// that warm it up).
fn per_session_kib(pid: u32, url: &str, token: Option<&str>, n: usize) -> f64 {
    let open = || match BareHttp::start_with(url, SESSION_REVISION, token) {
        Ok(session) => session,
        Err(e) => panic!("a session with {url}: {e}"),
    };
    let warm: Vec<BareHttp> = (0..2).map(|_| open()).collect();
    std::thread::sleep(Duration::from_millis(300));
    let before = vm_rss_kib(pid);
    let held: Vec<BareHttp> = (0..n).map(|_| open()).collect();
    // The sessions' own tasks (the gateway's change watch) have run once.
    std::thread::sleep(Duration::from_millis(300));
    let after = vm_rss_kib(pid);
    drop((held, warm));
    (after - before) / n as f64
}

fn vm_rss_kib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmRSS for process {pid}"))
}
