//! The runtime as a library: lifecycle (close order, a failed build closes the manager), the
//! approval request answered by the driver, the manager's last name check, fail-safe execute.

mod common;

use std::sync::Arc;
use std::time::Duration;

use aimon_console::approval::ApprovalDecision;
use aimon_console::config::{AnnotationTrust, Config, PolicyConfig, RestartPolicy, ServerConfig};
use aimon_console::mcp::events::{null_sink, McpEvent, ServerStatus};
use aimon_console::mcp::manager::McpClientManager;
use aimon_console::mcp::notify::NotificationTap;
use aimon_console::runtime::{
    AgentRuntimeFactory, CallStatus, RuntimeError, RuntimeEvent, RuntimeOptions,
};
use aimon_console::tool::local::ReadTool;
use aimon_console::tool::{Tool, ToolRegistry};
use common::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn demo(name: &str, flags: &[&str], trust: AnnotationTrust, marker: &str) -> ServerConfig {
    let mut server = demo_config(name, flags, trust, marker);
    server.request_timeout = Duration::from_secs(10);
    server
}

fn config(servers: Vec<ServerConfig>) -> Config {
    config_of(servers, PolicyConfig::default())
}

#[tokio::test]
async fn close_closes_the_manager_first_and_leaves_no_process() {
    let m = marker("close-order");
    let cfg = config(vec![demo(
        "a",
        &["--spawn-child", "991"],
        AnnotationTrust::Ignore,
        &m,
    )]);
    let (events, _stream) = AgentRuntimeFactory::events();
    let runtime = AgentRuntimeFactory::create(&cfg, RuntimeOptions::default(), events)
        .await
        .expect("runtime");
    runtime.wait_started().await;
    assert!(!processes_with(&m).is_empty(), "server should be running");
    let steps = runtime.close().await;
    let order: Vec<&str> = steps.iter().map(|s| s.what).collect();
    assert_eq!(
        order,
        vec!["mcp manager", "running calls", "hooks", "event stream"]
    );
    assert!(steps.iter().all(|s| s.result.is_ok()), "{steps:?}");
    assert!(wait_gone(&m, Duration::from_secs(1)).is_empty());
}

#[tokio::test]
async fn a_failed_runtime_build_closes_the_manager() {
    let m = marker("build-fail");
    let cfg = config(vec![demo(
        "a",
        &["--spawn-child", "992"],
        AnnotationTrust::Ignore,
        &m,
    )]);
    let (events, _stream) = AgentRuntimeFactory::events();
    // A second `read` collides with the local one: building the runtime fails after start.
    let options = RuntimeOptions {
        local_tools: true,
        extra_tools: vec![Arc::new(ReadTool::new()) as Arc<dyn Tool>],
        ..RuntimeOptions::default()
    };
    let result = AgentRuntimeFactory::create(&cfg, options, events).await;
    assert!(matches!(result, Err(RuntimeError::DuplicateTool(_))));
    assert!(
        wait_gone(&m, Duration::from_secs(1)).is_empty(),
        "the factory must close the manager it created"
    );
}

#[tokio::test]
async fn approvals_are_asked_of_the_driver_and_honoured() {
    let m = marker("approve");
    let cfg = config(vec![demo("demo", &[], AnnotationTrust::Trust, &m)]);
    let (events, mut stream) = AgentRuntimeFactory::events();
    let runtime = AgentRuntimeFactory::create(&cfg, RuntimeOptions::default(), events)
        .await
        .expect("runtime");
    runtime.wait_started().await;

    // The driver: allow the first request, deny the second; remember what was asked.
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = asked.clone();
    let driver = tokio::spawn(async move {
        let mut n = 0;
        while let Some(event) = stream.recv().await {
            if let RuntimeEvent::ApprovalRequested(request) = event {
                seen.lock()
                    .unwrap()
                    .push((request.tool.name.clone(), request.why.clone()));
                n += 1;
                request.respond(if n == 1 {
                    ApprovalDecision::AllowOnce
                } else {
                    ApprovalDecision::Deny
                });
            }
        }
    });

    let args = json!({"title": "t", "body": "b"});
    let first = runtime
        .call(
            "mcp__demo__write_note",
            args.clone(),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(first.status, CallStatus::Ok, "{first:?}");
    let second = runtime
        .call("mcp__demo__write_note", args, CancellationToken::new())
        .await;
    assert_eq!(second.status, CallStatus::Denied, "{second:?}");
    // Read-only under trust: runs without asking.
    let echo = runtime
        .call(
            "mcp__demo__echo",
            json!({"text": "x"}),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(echo.status, CallStatus::Ok);

    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0].0, "mcp__demo__write_note");
    assert!(asked[0].1.to_lowercase().contains("mutating"), "{asked:?}");
    runtime.close().await;
    driver.abort();
}

#[tokio::test]
async fn a_dead_server_makes_its_tools_fail_safe() {
    let m = marker("dead");
    // Not restarted: its tools keep answering `disconnected` (tests/supervisor.rs restarts).
    let mut server = demo("demo", &[], AnnotationTrust::Trust, &m);
    server.restart = RestartPolicy::Never;
    let cfg = config(vec![server]);
    let (events, _stream) = AgentRuntimeFactory::events();
    let runtime = AgentRuntimeFactory::create(&cfg, RuntimeOptions::default(), events)
        .await
        .expect("runtime");
    runtime.wait_started().await;
    for pid in processes_with(&m) {
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let out = runtime
        .call(
            "mcp__demo__echo",
            json!({"text": "x"}),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(out.status, CallStatus::Error);
    assert!(out.result.is_error);
    assert!(
        out.result.text.contains("disconnected"),
        "{}",
        out.result.text
    );
    runtime.close().await;
}

#[tokio::test]
async fn duplicate_names_never_overwrite_the_first_holder() {
    let m = marker("dup");
    let manager = McpClientManager::new(null_sink(), NotificationTap::none());
    let servers = vec![
        demo("same", &[], AnnotationTrust::Ignore, &m),
        demo("same", &["--lie"], AnnotationTrust::Trust, &m),
    ];
    let summary = manager.start_all(&servers, None).await;
    assert_eq!(summary.servers[0].status, ServerStatus::Ready);
    assert_eq!(summary.servers[1].status, ServerStatus::Failed);
    assert_eq!(
        summary.servers[1].failure.as_ref().unwrap().class.as_str(),
        "duplicate_name"
    );
    let registry = ToolRegistry::new();
    manager.register_all_tools(&registry);
    // The first holder's (untrusted) traits are the ones registered.
    let tool = registry.get("mcp__same__write_note").unwrap();
    assert!(tool.descriptor().provenance.contains("ignore"));
    assert!(manager.close_all().await.is_empty());
    assert!(wait_gone(&m, Duration::from_secs(1)).is_empty());
}

#[tokio::test]
async fn phases_are_published_as_events_while_servers_start() {
    let m = marker("events");
    let cfg = config(vec![demo(
        "demo",
        &["--stderr", "hello from demo"],
        AnnotationTrust::Ignore,
        &m,
    )]);
    let (events, mut stream) = AgentRuntimeFactory::events();
    let runtime = AgentRuntimeFactory::create(&cfg, RuntimeOptions::default(), events)
        .await
        .expect("runtime");
    runtime.wait_started().await;
    runtime.close().await;
    let mut phases = Vec::new();
    let mut stderr = Vec::new();
    let mut started = 0;
    while let Some(event) = stream.recv().await {
        if let RuntimeEvent::Mcp(e) = event {
            match e {
                McpEvent::PhaseStarted { phase, .. } => phases.push(phase.as_str()),
                McpEvent::Stderr { line, .. } => stderr.push(line),
                McpEvent::ServerStarted(_) => started += 1,
                McpEvent::ServerClosed { .. }
                | McpEvent::ServerDown { .. }
                | McpEvent::RestartScheduled { .. }
                | McpEvent::GaveUp { .. }
                | McpEvent::ServerRequest { .. }
                | McpEvent::ElicitationRequested(_)
                | McpEvent::SamplingRequested(_) => {}
            }
        }
    }
    assert_eq!(phases, vec!["spawn", "handshake", "list_tools"]);
    assert_eq!(started, 1);
    assert!(stderr.iter().any(|l| l == "hello from demo"), "{stderr:?}");
}

#[tokio::test]
async fn restarting_a_server_with_new_trust_resolves_its_tools_again() {
    let m = marker("restart");
    let mut server = demo("liar", &["--lie"], AnnotationTrust::Ignore, &m);
    let cfg = config(vec![server.clone()]);
    let (events, _stream) = AgentRuntimeFactory::events();
    let runtime = AgentRuntimeFactory::create(&cfg, RuntimeOptions::default(), events)
        .await
        .expect("runtime");
    runtime.wait_started().await;
    let before: Vec<i32> = processes_with(&m);
    let write = |rt: &aimon_console::runtime::AgentRuntime| {
        rt.tools()
            .into_iter()
            .find(|t| t.name == "mcp__liar__write_note")
            .expect("write_note")
    };
    assert_eq!(write(&runtime).side_effect.as_str(), "mutating");

    let preview = runtime.preview_trust("liar", AnnotationTrust::Trust);
    let names: Vec<&str> = preview.iter().map(|c| c.tool.as_str()).collect();
    // Every tool changes: the liars claim read-only, the honest ones are read-only anyway.
    assert!(names.contains(&"mcp__liar__write_note"), "{preview:?}");
    assert!(names.contains(&"mcp__liar__echo"), "{preview:?}");

    server.annotation_trust = AnnotationTrust::Trust;
    let report = runtime.restart_server(&server).await;
    assert_eq!(report.status, ServerStatus::Ready);
    assert_eq!(write(&runtime).side_effect.as_str(), "read_only");
    assert!(runtime
        .preview_trust("liar", AnnotationTrust::Trust)
        .is_empty());
    // A new process replaced the old one.
    let after = processes_with(&m);
    assert_eq!(after.len(), 1, "{after:?}");
    assert!(!before.contains(&after[0]));
    let tail = runtime.stderr_tail("liar", 5);
    assert!(tail.iter().any(|l| l.contains("restarted")), "{tail:?}");
    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(1)).is_empty());
}

/// A runtime started in place of another (the console's restart of every server) numbers its
/// calls on from the one before's: a call id names one call only.
#[tokio::test]
async fn call_ids_go_on_from_first_call_id() {
    let cfg = config(Vec::new());
    let (events, _stream) = AgentRuntimeFactory::events();
    let options = RuntimeOptions {
        first_call_id: 30,
        ..RuntimeOptions::default()
    };
    let runtime = AgentRuntimeFactory::create(&cfg, options, events)
        .await
        .expect("runtime");
    let dir = tempfile::tempdir().expect("a dir");
    let path = dir.path().join("a.txt");
    std::fs::write(&path, "x").expect("write");
    for expected in [31, 32] {
        let out = runtime
            .call(
                "read",
                json!({"path": path.to_string_lossy()}),
                CancellationToken::new(),
            )
            .await;
        assert_eq!(out.id, expected, "{out:?}");
    }
    runtime.close().await;
}
