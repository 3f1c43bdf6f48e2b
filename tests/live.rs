//! Live servers against the demo server's `--live-tools` (issue 5): a 20,000-message log flood
//! printed whole and in order, progress, cancellation of a call the server never answers,
//! the idle deadline and its total cap, a crash mid-call, a tool re-annotated across a turn
//! boundary (its approval forgotten, asked again), `logging/setLevel`, and `watch`.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aimon_console::approval::ApprovalDecision;
use aimon_console::config::{AnnotationTrust, ApprovalPolicy, PolicyConfig, ServerConfig};
use aimon_console::mcp::notify::LogLevel;
use aimon_console::runtime::event_json;
use aimon_console::runtime::{
    AgentRuntime, AgentRuntimeFactory, CallStatus, ChangeKind, RuntimeEvent, RuntimeOptions,
};
use aimon_console::tool::{DestructiveBehavior, SideEffectLevel};
use common::*;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// A trusted `--live-tools` demo server called `live`, as a YAML config file.
fn live_yaml(m: &str, extra: &str) -> TempConfig {
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&demo_server(
        "live",
        &["--live-tools"],
        &format!("annotation_trust: trust\n{extra}"),
        m,
    ));
    write_config(&yaml)
}

fn live_server(m: &str) -> ServerConfig {
    let mut server = demo_config("live", &["--live-tools"], AnnotationTrust::Trust, m);
    server.request_timeout = Duration::from_secs(10);
    server
}

/// Every stdout line of `call --events --json`, parsed.
fn json_lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

#[test]
fn a_flood_of_20000_log_messages_is_printed_whole_and_in_order() {
    let m = marker("flood");
    let cfg = live_yaml(&m, "");
    let log = cfg.dir.path().join("log");
    let run_flood = |count: u64| {
        let mut child = Command::new(bin())
            .arg("--config")
            .arg(&cfg.path)
            .arg("--log-file")
            .arg(&log)
            .args(["call", "mcp__live__flood", "--events", "--json", "--args"])
            .arg(json!({"count": count}).to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn call");
        let mut stdout = child.stdout.take().expect("stdout");
        let reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            std::io::Read::read_to_end(&mut stdout, &mut buf).map(|_| buf)
        });
        let (code, max_rss_kib) = wait4(child.id() as i32);
        std::mem::forget(child);
        (
            code,
            max_rss_kib,
            reader.join().unwrap().expect("read stdout"),
        )
    };

    let (code, rss_small, _) = run_flood(10);
    assert_eq!(code, 0);
    let (code, rss_flood, stdout) = run_flood(20_000);
    assert_eq!(code, 0);
    let lines = json_lines(&stdout);
    let numbers: Vec<u64> = of_type(&lines, "server_log")
        .iter()
        .map(|l| l["data"]["n"].as_u64().expect("numbered"))
        .collect();
    assert_eq!(numbers.len(), 20_000);
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "out of order");
    assert_eq!((numbers[0], numbers[19_999]), (1, 20_000));
    assert!(of_type(&lines, "events_dropped").is_empty());
    let log0 = of_type(&lines, "server_log")[0];
    assert_eq!(log0["level"], "info");
    assert_eq!(log0["logger"], "flood");
    assert_eq!(lines.last().unwrap()["type"], "outcome");
    assert_eq!(lines.last().unwrap()["status"], "ok");
    // The bus is bounded: 20,000 messages cost the console no more memory than 10 do, give
    // or take allocator noise (unbounded, they would hold every message at once).
    assert!(
        rss_flood < rss_small + 16 * 1024,
        "peak RSS {rss_flood} KiB with the flood, {rss_small} KiB without"
    );
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

/// Waits for `pid`: (exit code, peak resident set in KiB).
fn wait4(pid: i32) -> (i32, i64) {
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet reaped; both pointers are valid.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4 failed");
    (libc::WEXITSTATUS(status), usage.ru_maxrss)
}

#[test]
fn slow_shows_progress_events_of_its_call() {
    let m = marker("progress");
    let cfg = live_yaml(&m, "");
    let out = run(
        &[
            "call",
            "mcp__live__slow",
            "--args",
            r#"{"steps":3,"step_ms":50}"#,
            "--events",
            "--json",
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines = json_lines(&out.stdout);
    let progress: Vec<(f64, f64)> = of_type(&lines, "call_progress")
        .iter()
        .map(|l| {
            assert_eq!(l["id"], 1);
            (
                l["progress"].as_f64().unwrap(),
                l["total"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(progress, vec![(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]);
    assert_eq!(
        of_type(&lines, "call_progress")[0]["message"],
        "step 1 of 3"
    );
}

#[test]
fn ctrl_c_cancels_a_call_the_server_never_answers_within_a_second() {
    let m = marker("never");
    let cfg = live_yaml(&m, "");
    let mut child = common::default_signals(&mut Command::new(bin()))
        .arg("--config")
        .arg(&cfg.path)
        .arg("--log-file")
        .arg(cfg.dir.path().join("log"))
        .args(["call", "mcp__live__never_answer", "--events", "--json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn call");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let (tx, rx) = std::sync::mpsc::channel::<(Instant, Value)>();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line) {
                let _ = tx.send((Instant::now(), v));
            }
        }
    });
    // Let it run until it has reported progress a few times.
    let mut ticks = 0;
    while ticks < 3 {
        let (_, v) = rx.recv_timeout(Duration::from_secs(10)).expect("progress");
        if v["type"] == "call_progress" {
            ticks += 1;
        }
    }
    let sent = Instant::now();
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let finished = loop {
        let (at, v) = rx
            .recv_timeout(Duration::from_secs(5))
            .expect("call_finished");
        if v["type"] == "call_finished" {
            assert_eq!(v["status"], "cancelled", "{v}");
            break at;
        }
    };
    let took = finished.duration_since(sent);
    assert!(took < Duration::from_secs(1), "cancelled after {took:?}");
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(1));
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn a_crash_mid_call_ends_the_call_as_an_error_with_the_exit_status() {
    let m = marker("crash");
    let cfg = live_yaml(&m, "");
    let out = run(
        &[
            "call",
            "mcp__live__crash",
            "--args",
            r#"{"code":7}"#,
            "--yes",
            "--json",
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).expect("outcome JSON");
    assert_eq!(v["status"], "error", "{v}");
    let text = v["result"]["text"].as_str().unwrap();
    assert!(text.contains("exit code 7"), "{text}");
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

/// A runtime on the live server and a driver that records every event as its JSON line and
/// answers approvals: allow for the session when offered, else once; remembers what it asked.
struct Live {
    runtime: AgentRuntime,
    events: Arc<Mutex<Vec<Value>>>,
    asked: Arc<Mutex<Vec<(String, bool)>>>,
    marker: String,
}

impl Live {
    async fn start(
        name: &str,
        policy: PolicyConfig,
        server: impl FnOnce(&str) -> ServerConfig,
    ) -> Live {
        let m = marker(name);
        let cfg = config_of(vec![server(&m)], policy);
        let (events, mut stream) = AgentRuntimeFactory::events();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let asked = Arc::new(Mutex::new(Vec::new()));
        let (into, questions) = (seen.clone(), asked.clone());
        tokio::spawn(async move {
            while let Some(event) = stream.recv().await {
                into.lock().unwrap().push(event_json(&event));
                if let RuntimeEvent::ApprovalRequested(request) = event {
                    let session = request.session_approval_allowed();
                    questions
                        .lock()
                        .unwrap()
                        .push((request.tool.name.clone(), session));
                    request.respond(if session {
                        ApprovalDecision::AllowForSession
                    } else {
                        ApprovalDecision::AllowOnce
                    });
                }
            }
        });
        let runtime = AgentRuntimeFactory::create(&cfg, RuntimeOptions::default(), events)
            .await
            .expect("runtime");
        runtime.wait_started().await;
        Live {
            runtime,
            events: seen,
            asked,
            marker: m,
        }
    }

    async fn call(&self, tool: &str, args: Value) -> aimon_console::runtime::CallOutcome {
        self.runtime
            .call(tool, args, CancellationToken::new())
            .await
    }

    fn asked(&self) -> Vec<(String, bool)> {
        self.asked.lock().unwrap().clone()
    }

    fn events_of(&self, kind: &str) -> Vec<Value> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == kind)
            .cloned()
            .collect()
    }

    async fn close(self) {
        self.runtime.close().await;
        assert!(wait_gone(&self.marker, Duration::from_secs(2)).is_empty());
    }
}

fn tool(rt: &AgentRuntime, name: &str) -> aimon_console::tool::ToolDescriptor {
    rt.tools()
        .into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

#[tokio::test]
async fn a_tool_reannotated_destructive_loses_its_approval_at_the_turn_boundary() {
    let policy = PolicyConfig {
        approval: ApprovalPolicy::AskAll,
        ..PolicyConfig::default()
    };
    let live = Live::start("reannotate", policy, live_server).await;
    let echo = "mcp__live__echo";
    assert_eq!(
        tool(&live.runtime, echo).side_effect,
        SideEffectLevel::ReadOnly
    );

    // Asked once, allowed for the session; the second call runs without asking.
    for _ in 0..2 {
        let out = live.call(echo, json!({"text": "hi"})).await;
        assert_eq!(out.status, CallStatus::Ok, "{out:?}");
    }
    assert_eq!(live.asked(), vec![(echo.to_string(), true)]);
    assert_eq!(live.runtime.gate().ledger().len(), 1);

    let out = live
        .call(
            "mcp__live__change_tools",
            json!({"action": "annotate", "tool": "echo", "effect": "destructive"}),
        )
        .await;
    assert_eq!(out.status, CallStatus::Ok, "{out:?}");
    // Announced, not yet taken in: nothing changes mid-turn.
    assert_eq!(live.runtime.stale_servers(), vec!["live".to_string()]);
    assert_eq!(
        tool(&live.runtime, echo).side_effect,
        SideEffectLevel::ReadOnly
    );
    let ledger: Vec<String> = live
        .runtime
        .gate()
        .ledger()
        .into_iter()
        .map(|e| e.tool_name)
        .collect();
    assert!(ledger.contains(&echo.to_string()), "{ledger:?}");

    let diffs = live.runtime.turn_boundary().await;
    assert_eq!(diffs.len(), 1);
    let diff = &diffs[0];
    assert_eq!(diff.server, "live");
    assert!(diff.added.is_empty() && diff.removed.is_empty(), "{diff:?}");
    assert_eq!(diff.changed.len(), 1, "{diff:?}");
    assert_eq!(diff.changed[0].after.name, echo);
    assert_eq!(diff.changed[0].changes, vec![ChangeKind::Traits]);
    assert_eq!(diff.revoked, vec![echo.to_string()]);
    assert!(live.runtime.stale_servers().is_empty());
    // A second boundary has nothing to do.
    assert!(live.runtime.turn_boundary().await.is_empty());

    let now = tool(&live.runtime, echo);
    assert_eq!(now.side_effect, SideEffectLevel::Mutating);
    assert_eq!(now.destructive, DestructiveBehavior::Destructive);
    assert!(live
        .runtime
        .gate()
        .ledger()
        .iter()
        .all(|e| e.tool_name != echo));

    // The next call asks again, and a destructive tool is never offered for the session.
    let out = live.call(echo, json!({"text": "again"})).await;
    assert_eq!(out.status, CallStatus::Ok, "{out:?}");
    let asked = live.asked();
    assert_eq!(asked.last(), Some(&(echo.to_string(), false)), "{asked:?}");
    assert_eq!(asked.iter().filter(|(t, _)| t == echo).count(), 2);

    let changed = live.events_of("tools_changed");
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0]["changed"][0]["changes"], json!(["traits"]));
    assert_eq!(changed[0]["changed"][0]["after"]["destructive"], true);
    assert_eq!(changed[0]["revoked"], json!([echo]));
    assert_eq!(live.events_of("list_changed")[0]["list"], "tools");
    live.close().await;
}

#[tokio::test]
async fn cancelling_a_call_the_server_never_answers_ends_it_at_once() {
    let live = Live::start("cancel", PolicyConfig::default(), live_server).await;
    // Cancelled by id, as the console's key on a call does, once it has reported progress.
    let cancel_it = async {
        let id = loop {
            if let Some(p) = live.events_of("call_progress").first() {
                break p["id"].as_u64().expect("id");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let sent = Instant::now();
        assert!(live.runtime.cancel_call(id));
        sent
    };
    let call = live.runtime.call(
        "mcp__live__never_answer",
        json!({}),
        CancellationToken::new(),
    );
    let (out, sent) = tokio::join!(call, cancel_it);
    let took = sent.elapsed();
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert_eq!(out.status, CallStatus::Cancelled);
    assert!(!live.runtime.cancel_call(out.id), "no longer running");
    // The server ignores the cancel and goes on reporting progress every 100 ms: that is not
    // passed on as notifications tied to nothing.
    let progress = || live.events_of("call_progress").len();
    // What was reported before the cancel has been read by now.
    tokio::time::sleep(Duration::from_millis(150)).await;
    let before = progress();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let stray: Vec<Value> = live
        .events_of("notification")
        .into_iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert!(stray.is_empty(), "{stray:#?}");
    assert_eq!(progress(), before, "progress of a call that ended");
    live.close().await;
}

#[tokio::test]
async fn progress_pushes_the_deadline_back_but_the_total_cap_holds() {
    let live = Live::start("deadline", PolicyConfig::default(), |m| {
        let mut server = live_server(m);
        server.request_timeout = Duration::from_millis(300);
        server
    })
    .await;
    // 6 × 150 ms = 900 ms, three times request_timeout, alive thanks to progress.
    let out = live
        .call("mcp__live__slow", json!({"steps": 6, "step_ms": 150}))
        .await;
    assert_eq!(out.status, CallStatus::Ok, "{out:?}");
    // Progress every 100 ms forever: ended by the cap, 10 × request_timeout.
    let started = Instant::now();
    let out = live.call("mcp__live__never_answer", json!({})).await;
    let took = started.elapsed();
    assert_eq!(out.status, CallStatus::Error, "{out:?}");
    assert!(out.result.text.contains("total cap"), "{}", out.result.text);
    assert!(
        took >= Duration::from_millis(2900) && took < Duration::from_secs(5),
        "{took:?}"
    );
    live.close().await;
}

#[tokio::test]
async fn the_log_level_is_set_per_server() {
    let live = Live::start("level", PolicyConfig::default(), live_server).await;
    live.runtime
        .set_log_level("live", LogLevel::Warning)
        .await
        .expect("logging/setLevel");
    let out = live
        .call("mcp__live__flood", json!({"count": 5, "level": "info"}))
        .await;
    assert!(out.result.text.starts_with("sent 0 of 5"), "{out:?}");
    let out = live
        .call("mcp__live__flood", json!({"count": 5, "level": "error"}))
        .await;
    assert_eq!(out.result.text, "sent 5 log messages");
    live.runtime.close().await;
    // Closing ends the stream once everything sent was read.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let logs = live.events_of("server_log");
    assert_eq!(logs.len(), 5, "{logs:?}");
    assert!(logs
        .iter()
        .all(|l| l["level"] == "error" && l["server"] == "live"));
    assert!(live
        .runtime
        .set_log_level("nope", LogLevel::Debug)
        .await
        .is_err());
    assert!(wait_gone(&live.marker, Duration::from_secs(2)).is_empty());
}

#[test]
fn watch_streams_events_until_stdin_closes_when_asked_to() {
    let m = marker("watch");
    let cfg = live_yaml(&m, "");
    let mut child = common::default_signals(&mut Command::new(bin()))
        .arg("--config")
        .arg(&cfg.path)
        .arg("--log-file")
        .arg(cfg.dir.path().join("log"))
        .args(["watch", "--json", "--exit-on-stdin-eof"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn watch");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let v: Value = serde_json::from_str(&line.expect("line")).expect("JSON line");
        let ready = v["type"] == "server_started";
        seen.push(v);
        if ready {
            break;
        }
    }
    let kinds: Vec<&str> = seen.iter().filter_map(|v| v["type"].as_str()).collect();
    assert_eq!(
        kinds,
        vec!["phase", "phase", "phase", "server_started"],
        "{seen:?}"
    );
    assert_eq!(seen[3]["report"]["status"], "ready");
    // Closing stdin ends it (with --exit-on-stdin-eof; tests/scripts.rs has it without).
    let started = Instant::now();
    drop(child.stdin.take());
    let rest: Vec<Value> = lines
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str(&l).ok())
        .collect();
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        rest.iter().any(|v| v["type"] == "server_closed"),
        "{rest:?}"
    );
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}
