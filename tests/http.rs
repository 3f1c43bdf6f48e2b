//! Remote servers end to end over real sockets: the demo server over Streamable HTTP (check and
//! call), server-everything in `streamableHttp` and `sse` modes beside its stdio self, nothing
//! listening (`connect_refused`), a server that wants a bearer token (401 without it), the
//! token never showing in `check` output or the log file, and what comes in a call's stream
//! (progress, log messages) on the direct way of 2026-07-28 calls.

mod common;
mod peers;

use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

fn wait_listening(port: u16, timeout: Duration) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < timeout, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn remote(name: &str, transport: &str, url: &str, extra: &str) -> String {
    let mut s = format!("    - name: {name}\n      transport: {transport}\n      url: {url}\n");
    for line in extra.lines().filter(|l| !l.trim().is_empty()) {
        s.push_str(&format!("      {}\n", line.trim()));
    }
    s
}

/// Runs the binary with `args`, extra env, and the log in `log`.
fn run_with(args: &[&str], config: &Path, log: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.arg("--config")
        .arg(config)
        .arg("--log-file")
        .arg(log)
        .args(args)
        .stdin(Stdio::null())
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run aimon-console")
}

fn parse(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn tool_names(report: &Value, server: &str) -> Vec<String> {
    let mut names: Vec<String> = report["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter(|t| t["server"] == server)
        .filter_map(|t| t["tool"].as_str().map(str::to_string))
        .collect();
    names.sort();
    names
}

#[test]
fn demo_server_over_streamable_http_checks_and_calls() {
    let (_demo, url) = demo_http(&[]);
    let m = marker("http-demo");
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&remote(
        "remote",
        "streamable_http",
        &url,
        "annotation_trust: trust",
    ));
    yaml.push_str(&demo_server("local", &[], "", &m));
    let cfg = write_config(&yaml);
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 0, "{report:#}");
    let s = server(&report, "remote");
    assert_eq!(s["status"], "ready", "{s:#}");
    assert_eq!(s["transport"], "streamable_http");
    assert_eq!(s["tools"], 5);
    assert_eq!(s["server_info"]["name"], "aimon-demo");
    let phases = &s["phases"];
    assert!(phases["spawn_ms"].is_null(), "{s:#}");
    let connect = phases["connect_ms"].as_u64().expect("connect_ms");
    let handshake = phases["handshake_ms"].as_u64().expect("handshake_ms");
    let listed = phases["list_tools_ms"].as_u64().expect("list_tools_ms");
    assert!(connect <= handshake && handshake <= listed, "{s:#}");
    // stdio servers keep spawn_ms and have no connect_ms.
    let local = server(&report, "local");
    assert!(local["phases"]["connect_ms"].is_null(), "{local:#}");
    assert!(local["phases"]["spawn_ms"].is_u64(), "{local:#}");
    assert_eq!(tool_names(&report, "remote"), tool_names(&report, "local"));

    let human = run(&["check"], Some(&cfg.path));
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("SPAWN/CONNECT") && text.contains("streamable_http"),
        "{text}"
    );

    let out = run(
        &[
            "call",
            "mcp__remote__echo",
            "--args",
            r#"{"text":"over http"}"#,
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("over http"));
    // A mutating call, approved, then seen by the next session (one note store per server).
    let out = run(
        &[
            "call",
            "mcp__remote__write_note",
            "--args",
            r#"{"title":"t1","body":"b1"}"#,
            "--yes",
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = run(
        &[
            "call",
            "mcp__remote__delete_note",
            "--args",
            r#"{"title":"t1"}"#,
            "--yes",
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn nothing_listening_is_connect_refused_and_the_rest_start() {
    let port = free_port();
    let m = marker("refused");
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&remote(
        "gone",
        "streamable_http",
        &format!("http://127.0.0.1:{port}/mcp"),
        "",
    ));
    yaml.push_str(&remote(
        "gone-sse",
        "sse",
        &format!("http://127.0.0.1:{port}/sse"),
        "",
    ));
    yaml.push_str(&remote(
        "nowhere",
        "streamable_http",
        "http://no-such-host.invalid/mcp",
        "",
    ));
    yaml.push_str(&demo_server("local", &[], "", &m));
    let cfg = write_config(&yaml);
    let started = Instant::now();
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 1, "{report:#}");
    // Well within the 10 s connect timeout.
    assert!(started.elapsed() < Duration::from_secs(8), "{report:#}");
    for name in ["gone", "gone-sse"] {
        let s = server(&report, name);
        assert_eq!(s["failure"]["class"], "connect_refused", "{s:#}");
        assert_eq!(s["failure"]["phase"], "connect", "{s:#}");
        assert!(s["phases"]["connect_ms"].is_null(), "{s:#}");
    }
    let nowhere = server(&report, "nowhere");
    assert_eq!(nowhere["failure"]["class"], "dns_error", "{nowhere:#}");
    assert_eq!(server(&report, "local")["status"], "ready");
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn bearer_token_reaches_the_server_and_is_never_shown() {
    const TOKEN: &str = "tok-5f1e2d-never-show-me";
    let (_demo, url) = demo_http(&["--require-bearer", TOKEN]);
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&remote(
        "keyed",
        "streamable_http",
        &url,
        "bearer_token: ${AIMON_TEST_TOKEN}",
    ));
    yaml.push_str(&remote(
        "keyed-header",
        "streamable_http",
        &url,
        "headers: {Authorization: \"Bearer ${AIMON_TEST_TOKEN}\"}",
    ));
    yaml.push_str(&remote("locked", "streamable_http", &url, ""));
    yaml.push_str(&remote(
        "wrong",
        "streamable_http",
        &url,
        "bearer_token: not-the-token",
    ));
    let cfg = write_config(&yaml);
    let log = cfg.dir.path().join("aimon.log");
    let env = [("AIMON_TEST_TOKEN", TOKEN), ("AIMON_LOG", "debug")];

    let out = run_with(&["check", "--json"], &cfg.path, &log, &env);
    let report = parse(&out);
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    for name in ["keyed", "keyed-header"] {
        assert_eq!(server(&report, name)["status"], "ready", "{report:#}");
    }
    for name in ["locked", "wrong"] {
        let s = server(&report, name);
        assert_eq!(s["failure"]["class"], "http_status", "{s:#}");
        assert_eq!(s["failure"]["http_status"], 401, "{s:#}");
        assert_eq!(s["failure"]["phase"], "handshake", "{s:#}");
        let message = s["failure"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("credentials"), "{s:#}");
    }
    let human = run_with(&["check"], &cfg.path, &log, &env);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("bearer_token"),
        "the 401 hint names bearer_token: {text}"
    );

    let logged = std::fs::read_to_string(&log).expect("log file");
    assert!(!logged.is_empty());
    for (what, bytes) in [
        ("check --json stdout", &out.stdout),
        ("check --json stderr", &out.stderr),
        ("check stdout", &human.stdout),
        ("check stderr", &human.stderr),
        ("log file", &logged.clone().into_bytes()),
    ] {
        let shown = String::from_utf8_lossy(bytes);
        assert!(!shown.contains(TOKEN), "the token shows in {what}");
    }
}

#[test]
fn server_everything_over_streamable_http_and_sse_lists_what_stdio_lists() {
    let script = peers::npm().join("@modelcontextprotocol/server-everything/dist/index.js");
    let start = |mode: &str| {
        let port = free_port();
        let child = Command::new("node")
            .arg(&script)
            .arg(mode)
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start server-everything");
        let guard = Background(child);
        wait_listening(port, Duration::from_secs(20));
        (guard, port)
    };
    let (_http, http_port) = start("streamableHttp");
    let (_sse, sse_port) = start("sse");
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&format!(
        "    - name: stdio\n      command: node\n      args: [{:?}, stdio]\n",
        script.display().to_string()
    ));
    yaml.push_str(&remote(
        "http",
        "streamable_http",
        &format!("http://127.0.0.1:{http_port}/mcp"),
        "",
    ));
    yaml.push_str(&remote(
        "sse",
        "sse",
        &format!("http://127.0.0.1:{sse_port}/sse"),
        "",
    ));
    let cfg = write_config(&yaml);
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 0, "{report:#}");
    let stdio = tool_names(&report, "stdio");
    assert!(stdio.len() >= 13, "{report:#}");
    for name in ["http", "sse"] {
        let s = server(&report, name);
        assert_eq!(s["status"], "ready", "{s:#}");
        assert_eq!(s["server_info"]["name"], "mcp-servers/everything", "{s:#}");
        assert!(s["phases"]["connect_ms"].is_u64(), "{s:#}");
        assert_eq!(tool_names(&report, name), stdio, "{name}");
    }
}

/// From revision 2026-07-28 on a `tools/call` over Streamable HTTP is POSTed and read by the
/// client itself (`transport/http_direct.rs`), not through rmcp's transport worker: what the
/// server sends in the call's stream (progress, log messages) reaches the call as it does over
/// stdio, and the log says the calls went that way.
#[test]
fn progress_and_log_messages_in_a_calls_stream_over_streamable_http_reach_it() {
    let (_demo, url) = demo_http(&["--live-tools"]);
    let yaml = format!(
        "mcp:\n  servers:\n{}",
        remote("remote", "streamable_http", &url, "annotation_trust: trust")
    );
    let cfg = write_config(&yaml);
    let log = cfg.dir.path().join("log");
    let lines = |tool: &str, args: &str| -> Vec<Value> {
        let out = run_with(
            &["call", tool, "--args", args, "--events", "--json"],
            &cfg.path,
            &log,
            &[("AIMON_LOG", "debug")],
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    };
    let of_type = |lines: &[Value], kind: &str| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| l["type"] == kind)
            .cloned()
            .collect()
    };

    let slow = lines("mcp__remote__slow", r#"{"steps":3,"step_ms":50}"#);
    let progress: Vec<(f64, f64)> = of_type(&slow, "call_progress")
        .iter()
        .map(|l| {
            (
                l["progress"].as_f64().unwrap(),
                l["total"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        progress,
        vec![(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)],
        "{slow:#?}"
    );
    assert_eq!(slow.last().unwrap()["status"], "ok", "{slow:#?}");

    let flood = lines("mcp__remote__flood", r#"{"count":5,"level":"error"}"#);
    let numbers: Vec<u64> = of_type(&flood, "server_log")
        .iter()
        .map(|l| l["data"]["n"].as_u64().expect("numbered"))
        .collect();
    assert_eq!(numbers, vec![1, 2, 3, 4, 5], "{flood:#?}");
    assert_eq!(flood.last().unwrap()["status"], "ok", "{flood:#?}");

    let logged = std::fs::read_to_string(&log).expect("log");
    assert!(
        logged.contains("tools/call goes the direct way")
            && logged.contains("over=\"streamable_http\""),
        "{logged}"
    );
}
