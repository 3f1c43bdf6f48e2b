//! End to end against real third-party MCP servers (PEERS.md): server-everything,
//! server-filesystem (TypeScript SDK) and mcp-server-time (Python SDK, 2026-07-28 era).

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
        "annotation_trust: trust",
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
