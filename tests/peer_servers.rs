//! End to end against real third-party MCP servers (PEERS.md): server-everything,
//! server-filesystem (TypeScript SDK), mcp-server-time (Python SDK, 2026-07-28 era),
//! mcp-server-git and mcp-server-fetch.

mod common;
mod peers;

use std::time::Duration;

use common::*;

fn node_server(name: &str, script: &str, args: &[String], extra: &str, m: &str) -> String {
    let script = peers::npm().join(script);
    let mut all = vec![format!("{:?}", script.display().to_string())];
    all.extend(args.iter().map(|a| format!("{a:?}")));
    let mut s = format!(
        "    - name: {name}\n      command: node\n      args: [{}]\n      env: {{AIMON_TEST_MARKER: {m}}}\n",
        all.join(", ")
    );
    for line in extra.lines().filter(|l| !l.trim().is_empty()) {
        s.push_str(&format!("      {}\n", line.trim()));
    }
    s
}

#[test]
fn third_party_servers_start_list_tools_and_resolve_traits() {
    let m = marker("peers");
    let files = tempfile::tempdir().unwrap();
    let files_dir = files.path().canonicalize().unwrap().display().to_string();
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&node_server(
        "everything",
        "@modelcontextprotocol/server-everything/dist/index.js",
        &["stdio".into()],
        "annotation_trust: trust",
        &m,
    ));
    yaml.push_str(&node_server(
        "files",
        "@modelcontextprotocol/server-filesystem/dist/index.js",
        std::slice::from_ref(&files_dir),
        "annotation_trust: trust",
        &m,
    ));
    yaml.push_str(&node_server(
        "files-untrusted",
        "@modelcontextprotocol/server-filesystem/dist/index.js",
        std::slice::from_ref(&files_dir),
        "",
        &m,
    ));
    yaml.push_str(&format!(
        "    - name: time\n      command: {}\n      env: {{AIMON_TEST_MARKER: {m}}}\n",
        peers::python().join("mcp-server-time").display()
    ));
    // mcp-server-git on a repository of its own, and mcp-server-fetch (listed, not called).
    let repo = tempfile::tempdir().unwrap();
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(repo.path())
        .status()
        .expect("git runs");
    assert!(init.success());
    yaml.push_str(&format!(
        "    - name: git\n      command: {}\n      args: [-r, {:?}]\n      env: {{AIMON_TEST_MARKER: {m}}}\n",
        peers::python().join("mcp-server-git").display(),
        repo.path().display().to_string()
    ));
    yaml.push_str(&format!(
        "    - name: fetch\n      command: {}\n      env: {{AIMON_TEST_MARKER: {m}}}\n",
        peers::python().join("mcp-server-fetch").display()
    ));
    let cfg = write_config(&yaml);
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 0, "{report:#}");
    let tools = &report["tools"];

    let everything = server(&report, "everything");
    assert_eq!(everything["status"], "ready");
    assert!(
        everything["tools"].as_u64().unwrap() >= 13,
        "{everything:#}"
    );
    assert_eq!(everything["protocol_version"], "2025-11-25");
    assert_eq!(everything["server_info"]["name"], "mcp-servers/everything");
    let echo = tool(tools, "mcp__everything__echo");
    assert_eq!(echo["side_effect"], "read_only", "{echo:#}");

    let fs = server(&report, "files");
    assert_eq!(fs["status"], "ready");
    let write = tool(tools, "mcp__files__write_file");
    assert_eq!(write["side_effect"], "mutating", "{write:#}");
    assert_eq!(write["destructive"], true, "{write:#}");
    assert_eq!(write["annotations"]["destructiveHint"], true);
    let read = tool(tools, "mcp__files__read_text_file");
    assert_eq!(read["side_effect"], "read_only", "{read:#}");
    // The same server untrusted: even its read tools are mutating and destructive.
    let read_untrusted = tool(tools, "mcp__files-untrusted__read_text_file");
    assert_eq!(read_untrusted["side_effect"], "mutating");
    assert_eq!(read_untrusted["destructive"], true);

    let time = server(&report, "time");
    assert_eq!(time["status"], "ready", "{time:#}");
    assert_eq!(time["protocol_version"], "2026-07-28", "{time:#}");
    assert!(tools
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "mcp__time__get_current_time"));

    // Real servers' texts raise no tool-poisoning flag (tool/poison.rs), whatever they say.
    for name in ["git", "fetch"] {
        let s = server(&report, name);
        assert_eq!(s["status"], "ready", "{s:#}");
    }
    let all = tools.as_array().unwrap();
    for prefix in ["everything", "files", "time", "git", "fetch"] {
        let theirs: Vec<&serde_json::Value> =
            all.iter().filter(|t| t["server"] == prefix).collect();
        assert!(!theirs.is_empty(), "no tools of {prefix}");
        for t in theirs {
            assert_eq!(t["warnings"], serde_json::json!([]), "{t:#}");
        }
    }
    assert!(tool(tools, "mcp__fetch__fetch")["name"].is_string());
    assert!(tool(tools, "mcp__git__git_status")["name"].is_string());

    assert!(
        wait_gone(&m, Duration::from_secs(2)).is_empty(),
        "peer processes left"
    );
}

#[test]
fn calls_reach_third_party_servers_through_the_gate() {
    let m = marker("peer-calls");
    let files = tempfile::tempdir().unwrap();
    let files_dir = files.path().canonicalize().unwrap().display().to_string();
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&node_server(
        "files",
        "@modelcontextprotocol/server-filesystem/dist/index.js",
        std::slice::from_ref(&files_dir),
        // server-filesystem takes the client's roots instead of its own folders: give it its
        // folder (the default would be this config's folder).
        &format!("annotation_trust: trust\nroots: [{files_dir:?}]"),
        &m,
    ));
    yaml.push_str(&format!(
        "    - name: time\n      command: {}\n      env: {{AIMON_TEST_MARKER: {m}}}\n",
        peers::python().join("mcp-server-time").display()
    ));
    let cfg = write_config(&yaml);
    let target = format!("{files_dir}/hello.txt");
    let args = serde_json::json!({"path": target, "content": "hi from aimon"}).to_string();

    // Destructive: refused without a terminal, runs with --yes.
    let out = run(
        &["call", "mcp__files__write_file", "--args", &args],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(!std::path::Path::new(&target).exists());
    let out = run(
        &["call", "mcp__files__write_file", "--args", &args, "--yes"],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi from aimon");

    // Read-only under trust: no approval needed.
    let args = serde_json::json!({"path": target}).to_string();
    let out = run(
        &["call", "mcp__files__read_text_file", "--args", &args],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("hi from aimon"));

    // Outside the allowed folder: the server's isError becomes a failed call.
    let args = serde_json::json!({"path": "/etc/hostname"}).to_string();
    let out = run(
        &["call", "mcp__files__read_text_file", "--args", &args],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(1));

    // The Python server, 2026-07-28 era; untrusted, so --yes.
    let out = run(
        &[
            "call",
            "mcp__time__get_current_time",
            "--args",
            r#"{"timezone":"UTC"}"#,
            "--yes",
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("UTC"));
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

/// server-everything over stdio as a library runtime (approval `never`), its events recorded
/// as their JSON lines.
#[tokio::test]
async fn server_everything_live_notifications_progress_and_requests() {
    use aimon_console::config::{AnnotationTrust, ApprovalPolicy, PolicyConfig, ServerConfig};
    use aimon_console::mcp::events::null_sink;
    use aimon_console::mcp::manager::McpClientManager;
    use aimon_console::mcp::notify::NotificationTap;
    use aimon_console::runtime::event_json;
    use aimon_console::runtime::{AgentRuntimeFactory, CallStatus, RuntimeOptions, ServerStatus};
    use serde_json::{json, Value};
    use std::sync::{Arc, Mutex};
    use tokio_util::sync::CancellationToken;

    let m = marker("everything-live");
    let script = peers::npm().join("@modelcontextprotocol/server-everything/dist/index.js");
    let mut server = ServerConfig::stdio(
        "everything",
        "node",
        vec![script.display().to_string(), "stdio".into()],
    );
    server.env.insert("AIMON_TEST_MARKER".into(), m.clone());
    server.annotation_trust = AnnotationTrust::Trust;
    let policy = PolicyConfig {
        approval: ApprovalPolicy::Never,
        ..PolicyConfig::default()
    };
    let mut cfg = config_of(vec![server], policy);
    cfg.mcp.roots = vec!["file:///tmp/aimon-roots".into()];
    let (events, mut stream) = AgentRuntimeFactory::events();
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let into = seen.clone();
    tokio::spawn(async move {
        while let Some(event) = stream.recv().await {
            into.lock().unwrap().push(event_json(&event));
        }
    });
    let of = |kind: &str| -> Vec<Value> {
        seen.lock()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == kind)
            .cloned()
            .collect()
    };
    let runtime = AgentRuntimeFactory::create(&cfg, RuntimeOptions::default(), events)
        .await
        .expect("runtime");
    runtime.wait_started().await;

    // It announced tools/list_changed during start-up, before answering the first tools/list;
    // start-up still ends with the full list: what a fresh tools/list says now.
    let tools_changed = of("list_changed");
    assert!(
        tools_changed.iter().any(|e| e["list"] == "tools"),
        "{tools_changed:?}"
    );
    let registered = runtime
        .tools()
        .iter()
        .filter(|t| t.origin.as_ref().is_some_and(|o| o.server == "everything"))
        .count();
    // A second, independent client of the same server: what a fresh tools/list says now.
    let fresh = {
        let manager = McpClientManager::new(null_sink(), NotificationTap::none());
        let summary = manager.start_all(&cfg.mcp.servers, None).await;
        assert_eq!(
            summary.servers[0].status,
            ServerStatus::Ready,
            "{summary:?}"
        );
        let n = manager.tool_names("everything").len();
        manager.close_all().await;
        n
    };
    assert_eq!(registered, fresh);
    assert!(
        registered > 13,
        "{registered}: the tools for our capabilities are missing"
    );
    let call = |tool: &'static str, args: Value| {
        let runtime = &runtime;
        async move {
            runtime
                .call(
                    &format!("mcp__everything__{tool}"),
                    args,
                    CancellationToken::new(),
                )
                .await
        }
    };

    // roots/list is answered from the configured roots, and shown.
    let out = call("get-roots-list", json!({})).await;
    assert_eq!(out.status, CallStatus::Ok, "{out:?}");
    assert!(
        out.result.text.contains("file:///tmp/aimon-roots"),
        "{out:?}"
    );
    let asked = of("server_request");
    assert!(
        asked
            .iter()
            .any(|e| e["method"] == "roots/list" && e["outcome"] == "answered"),
        "{asked:?}"
    );

    // No `agent:` here, so sampling is not declared and the server offers no tool that asks
    // for it (tests/agent_sampling.rs answers it with a model).
    assert!(
        !runtime
            .tools()
            .iter()
            .any(|t| t.name.contains("trigger-sampling-request")),
        "sampling declared without a model"
    );

    // Progress, with the call's own token.
    let out = call(
        "trigger-long-running-operation",
        json!({"duration": 1, "steps": 4}),
    )
    .await;
    assert_eq!(out.status, CallStatus::Ok, "{out:?}");
    let progress: Vec<(f64, f64)> = of("call_progress")
        .iter()
        .filter(|e| e["id"] == out.id)
        .map(|e| {
            (
                e["progress"].as_f64().unwrap(),
                e["total"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        progress,
        vec![(1.0, 4.0), (2.0, 4.0), (3.0, 4.0), (4.0, 4.0)]
    );

    // Simulated logging: the first message comes at once, with its level.
    let out = call("toggle-simulated-logging", json!({})).await;
    assert_eq!(out.status, CallStatus::Ok, "{out:?}");
    let deadline = std::time::Instant::now() + Duration::from_secs(8);
    let simulated = loop {
        let found = of("server_log").into_iter().find(|e| {
            e["data"]
                .as_str()
                .is_some_and(|d| d.contains("-level") || d.contains("level-"))
        });
        if let Some(found) = found {
            break found;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no simulated log message"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let level = simulated["level"].as_str().expect("level");
    let data = simulated["data"].as_str().unwrap().to_lowercase();
    assert!(data.starts_with(level), "level {level} for {data:?}");

    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}
