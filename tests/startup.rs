//! Start-up that never blocks: each server joins the moment it is ready while a slow one still
//! starts; the queue of `max_concurrent_starts`; the timeline of `check --json`; a failed
//! server started again by hand; a call that waits only for its own server. Real demo-server
//! processes over real pipes.

mod common;

use std::time::{Duration, Instant};

use aimon_console::config::{AnnotationTrust, ApprovalPolicy, PolicyConfig};
use aimon_console::runtime::{
    AgentRuntimeFactory, CallStatus, FailureClass, RuntimeOptions, ServerStatus,
};
use common::*;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// A fast server and one that never answers its handshake.
fn fast_and_hung(m: &str, hung_timeout: &str) -> TempConfig {
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&demo_server("fast", &[], "", m));
    yaml.push_str(&demo_server(
        "hung",
        &["--hang-init"],
        &format!("request_timeout: {hung_timeout}"),
        m,
    ));
    write_config(&yaml)
}

#[tokio::test]
async fn a_ready_server_is_callable_while_another_still_starts() {
    let m = marker("join");
    let fast = demo_config("fast", &[], AnnotationTrust::Trust, &m);
    let mut hung = demo_config("hung", &["--hang-init"], AnnotationTrust::Ignore, &m);
    hung.request_timeout = Duration::from_secs(3);
    let config = config_of(vec![fast, hung], PolicyConfig::default());
    let (events, mut stream) = AgentRuntimeFactory::events();
    tokio::spawn(async move { while stream.recv().await.is_some() {} });
    let runtime = AgentRuntimeFactory::create(&config, RuntimeOptions::default(), events)
        .await
        .expect("runtime");

    let fast = runtime.wait_for_server("fast").await.expect("configured");
    assert_eq!(fast.status, ServerStatus::Ready, "{fast:?}");
    // The hung one has not finished: start-up has not settled, yet fast's tools are in.
    let hung = runtime
        .reports()
        .into_iter()
        .find(|r| r.name == "hung")
        .expect("hung");
    assert_eq!(hung.status, ServerStatus::Starting, "{hung:?}");
    let outcome = runtime
        .call(
            "mcp__fast__echo",
            json!({"text": "early"}),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.status, CallStatus::Ok, "{outcome:?}");
    assert_eq!(outcome.result.text, "early");

    // Then it settles: the hung one failed its handshake after its own timeout.
    let summary = runtime.wait_started().await;
    let hung = summary.servers.iter().find(|r| r.name == "hung").unwrap();
    let failure = hung.failure.as_ref().expect("failed");
    assert_eq!(failure.class, FailureClass::HandshakeTimeout, "{hung:?}");
    let took = hung.start_took().expect("ended");
    assert!(
        took >= Duration::from_secs(3) && took < Duration::from_secs(10),
        "the row must say how long it took to fail: {took:?}"
    );
    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}

#[test]
fn a_call_waits_only_for_its_own_server() {
    let m = marker("call-fast");
    let cfg = fast_and_hung(&m, "20s");
    let started = Instant::now();
    let out = run(
        &[
            "call",
            "mcp__fast__echo",
            "--args",
            r#"{"text":"hi"}"#,
            "--yes",
        ],
        Some(&cfg.path),
    );
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "hi");
    // The hung server's 20 s never came into it (the bound is loose: a loaded CI machine).
    assert!(took < Duration::from_secs(10), "call took {took:?}");
    eprintln!("call with a hung server in the config returned in {took:?}");
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}

#[test]
fn check_json_gives_each_servers_timeline() {
    let m = marker("timeline");
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&demo_server("quick", &[], "", &m));
    yaml.push_str(&demo_server("slow", &["--init-delay-ms", "400"], "", &m));
    yaml.push_str("    - name: missing\n      command: /nonexistent/aimon-test-server\n");
    let cfg = write_config(&yaml);
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 1, "{report:#}");
    let quick = server(&report, "quick");
    let slow = server(&report, "slow");
    let missing = server(&report, "missing");
    for s in [quick, slow] {
        let started = s["started_at_ms"].as_u64().expect("started_at_ms");
        let ready = s["ready_at_ms"].as_u64().expect("ready_at_ms");
        assert!(s["failed_at_ms"].is_null(), "{s:#}");
        assert!(started <= ready, "{s:#}");
        // Its own phase times and its timeline agree.
        let listed = s["phases"]["list_tools_ms"].as_u64().unwrap();
        assert!(ready - started + 5 >= listed, "{s:#}");
        assert!(s["phases"]["queued_ms"].is_null(), "no queue: {s:#}");
    }
    assert!(
        slow["ready_at_ms"].as_u64() >= quick["ready_at_ms"].as_u64(),
        "{report:#}"
    );
    assert!(missing["ready_at_ms"].is_null(), "{missing:#}");
    let failed_at = missing["failed_at_ms"].as_u64().expect("failed_at_ms");
    assert!(
        failed_at < slow["ready_at_ms"].as_u64().unwrap(),
        "a missing command fails at once: {report:#}"
    );
    assert_eq!(missing["failure"]["class"], "command_not_found");
}

/// Intervals [started_at, ready_at) of every server: the most that overlap at any moment.
fn most_at_once(servers: &[Value]) -> usize {
    let mut edges: Vec<(u64, i32)> = Vec::new();
    for s in servers {
        let start = s["started_at_ms"].as_u64().expect("started_at_ms");
        let end = s["ready_at_ms"].as_u64().expect("ready_at_ms");
        edges.push((start, 1));
        edges.push((end, -1));
    }
    // At equal times an end comes before a start: a slot freed is taken at once.
    edges.sort_by_key(|&(t, d)| (t, d));
    let (mut now, mut most) = (0i32, 0i32);
    for (_, d) in edges {
        now += d;
        most = most.max(now);
    }
    most as usize
}

#[test]
fn max_concurrent_starts_queues_the_rest() {
    let m = marker("queue");
    let mut yaml = String::from("mcp:\n  max_concurrent_starts: 4\n  servers:\n");
    for i in 0..16 {
        yaml.push_str(&demo_server(
            &format!("s{i}"),
            &["--init-delay-ms", "300"],
            "",
            &m,
        ));
    }
    let cfg = write_config(&yaml);
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 0, "{report:#}");
    let servers = report["servers"].as_array().unwrap().clone();
    assert_eq!(servers.len(), 16);
    let most = most_at_once(&servers);
    assert!(
        most <= 4,
        "{most} servers between their start and ready at once: {report:#}"
    );
    assert_eq!(most, 4, "the four slots are used: {report:#}");
    let queued: Vec<u64> = servers
        .iter()
        .filter_map(|s| s["phases"]["queued_ms"].as_u64())
        .collect();
    assert!(queued.len() >= 12, "twelve waited in the queue: {report:#}");
    assert!(
        queued.iter().any(|&q| q >= 600),
        "the last ones waited for two rounds: {queued:?}"
    );
    // The deadline counts from each server's own start: the wait did not count against it.
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}

#[test]
fn without_a_limit_every_server_starts_at_once() {
    let m = marker("noqueue");
    let mut yaml = String::from("mcp:\n  servers:\n");
    for i in 0..8 {
        yaml.push_str(&demo_server(
            &format!("s{i}"),
            &["--init-delay-ms", "300"],
            "",
            &m,
        ));
    }
    let cfg = write_config(&yaml);
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 0, "{report:#}");
    let servers = report["servers"].as_array().unwrap().clone();
    assert_eq!(most_at_once(&servers), 8, "{report:#}");
}

#[tokio::test]
async fn a_failed_server_started_again_by_hand_joins() {
    let m = marker("retry");
    let dir = tempfile::tempdir().expect("dir");
    let script = dir.path().join("server.sh");
    // The command does not exist yet: the first start fails.
    let mut server = demo_config("late", &[], AnnotationTrust::Ignore, &m);
    server.command = Some(script.display().to_string());
    server.args = Vec::new();
    let policy = PolicyConfig {
        approval: ApprovalPolicy::Never,
        ..PolicyConfig::default()
    };
    let config = config_of(vec![server.clone()], policy);
    let (events, mut stream) = AgentRuntimeFactory::events();
    tokio::spawn(async move { while stream.recv().await.is_some() {} });
    let runtime = AgentRuntimeFactory::create(&config, RuntimeOptions::default(), events)
        .await
        .expect("runtime");
    let summary = runtime.wait_started().await;
    let failure = summary.servers[0].failure.as_ref().expect("failed");
    assert_eq!(failure.class, FailureClass::CommandNotFound);
    assert!(runtime.tools().iter().all(|t| t.origin.is_none()));

    std::fs::write(&script, format!("#!/bin/sh\nexec {} demo-server\n", bin()))
        .expect("write script");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");

    let report = runtime.restart_server(&server).await;
    assert_eq!(report.status, ServerStatus::Ready, "{report:?}");
    let outcome = runtime
        .call(
            "mcp__late__echo",
            json!({"text": "back"}),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.status, CallStatus::Ok, "{outcome:?}");
    assert_eq!(outcome.result.text, "back");
    assert!(runtime.tools().iter().any(|t| t.name == "mcp__late__echo"));
    assert_eq!(
        runtime.reports()[0].status,
        ServerStatus::Ready,
        "the report is replaced"
    );
    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}

#[tokio::test]
async fn a_restart_overtakes_a_start_still_in_flight() {
    let m = marker("overtake");
    let mut slow = demo_config(
        "s",
        &["--init-delay-ms", "1500"],
        AnnotationTrust::Ignore,
        &m,
    );
    slow.request_timeout = Duration::from_secs(10);
    let config = config_of(vec![slow.clone()], PolicyConfig::default());
    let (events, mut stream) = AgentRuntimeFactory::events();
    tokio::spawn(async move { while stream.recv().await.is_some() {} });
    let runtime = AgentRuntimeFactory::create(&config, RuntimeOptions::default(), events)
        .await
        .expect("runtime");
    // While the first start waits for its handshake, start it again without the delay.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let quick = demo_config("s", &[], AnnotationTrust::Ignore, &m);
    let report = runtime.restart_server(&quick).await;
    assert_eq!(report.status, ServerStatus::Ready, "{report:?}");
    // The first start was abandoned: one process only, and it never joins later.
    tokio::time::sleep(Duration::from_millis(1800)).await;
    assert_eq!(processes_with(&m).len(), 1, "{:?}", processes_with(&m));
    assert_eq!(runtime.reports()[0].status, ServerStatus::Ready);
    assert_eq!(
        runtime.reports()[0].phases.handshake_ms.map(|ms| ms < 1500),
        Some(true),
        "the report is the quick start's: {:?}",
        runtime.reports()[0]
    );
    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}

/// A server of 100,000 tools, listing them as real servers with that many do (in pages, here of
/// 1,000: one page would pass the 16 MiB line limit), becomes ready with every tool registered
/// and callable. About the count, not the speed: the timeout is generous for a debug build.
#[tokio::test]
async fn a_server_of_100000_tools_in_pages_becomes_ready_with_every_tool() {
    let m = marker("many-tools");
    let mut many = demo_config(
        "many",
        &["--extra-tools", "99995", "--tools-page", "1000"],
        AnnotationTrust::Trust,
        &m,
    );
    many.request_timeout = Duration::from_secs(120);
    let config = config_of(vec![many], PolicyConfig::default());
    let (events, mut stream) = AgentRuntimeFactory::events();
    tokio::spawn(async move { while stream.recv().await.is_some() {} });
    let runtime = AgentRuntimeFactory::create(&config, RuntimeOptions::default(), events)
        .await
        .expect("runtime");

    let report = runtime.wait_for_server("many").await.expect("configured");
    assert_eq!(report.status, ServerStatus::Ready, "{report:?}");
    assert_eq!(report.tools, 100_000, "{report:?}");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let tools = runtime.tool_snapshot();
    let registered = tools
        .keys()
        .filter(|n| n.starts_with("mcp__many__"))
        .count();
    assert_eq!(registered, 100_000);
    for name in ["echo", "extra_0", "extra_50000", "extra_99994"] {
        assert!(tools.contains_key(&format!("mcp__many__{name}")), "{name}");
    }
    let outcome = runtime
        .call(
            "mcp__many__extra_99994",
            json!({}),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.status, CallStatus::Ok, "{outcome:?}");
    assert_eq!(outcome.result.text, "extra_99994");
    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}
