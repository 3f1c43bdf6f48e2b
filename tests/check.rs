//! `check` end to end: real demo-server processes over real pipes, every fault flag, the
//! report's JSON shape, exit codes, and that no process outlives the command.

mod common;

use std::time::Duration;

use common::*;

#[test]
fn example_config_starts_every_demo_server() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.yaml");
    let (code, report) = check_json(&path);
    assert_eq!(code, 0, "{report:#}");
    for s in report["servers"].as_array().unwrap() {
        if s["name"] == "parked" {
            assert_eq!(s["status"], "disabled");
            continue;
        }
        assert_eq!(s["status"], "ready", "{s:#}");
        // The five demo tools; the live server has its five live tools besides.
        let expected = if s["name"] == "live" { 10 } else { 5 };
        assert_eq!(s["tools"], expected, "{s:#}");
        for phase in ["spawn_ms", "handshake_ms", "list_tools_ms"] {
            assert!(s["phases"][phase].is_u64(), "{phase} missing: {s:#}");
        }
        assert!(s["phases"]["spawn_ms"].as_u64() <= s["phases"]["handshake_ms"].as_u64());
        assert!(s["phases"]["handshake_ms"].as_u64() <= s["phases"]["list_tools_ms"].as_u64());
        assert_eq!(s["server_info"]["name"], "aimon-demo");
    }
    // The demo servers' tools raise no tool-poisoning flag (the liar lies about its traits,
    // which is not what the flags are about).
    for t in report["tools"].as_array().unwrap() {
        assert_eq!(t["warnings"], serde_json::json!([]), "{t:#}");
    }
    let slow = server(&report, "slow-start");
    assert!(
        slow["phases"]["handshake_ms"].as_u64().unwrap() >= 800,
        "{slow:#}"
    );
    let chatty = server(&report, "chatty");
    assert!(
        chatty["warnings"][0].as_str().unwrap().contains("not JSON"),
        "{chatty:#}"
    );
}

#[test]
fn human_report_shows_phases_and_traits() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.yaml");
    let out = run(&["check"], Some(&path));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for needle in [
        "SERVER",
        "HANDSHAKE",
        "TOOLS LISTED",
        "notes-trusted",
        "ready",
        "SIDE EFFECT",
        "DESTRUCTIVE",
        "mcp__notes-trusted__echo",
        "readOnlyHint=true",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn five_slow_servers_start_in_parallel() {
    let m = marker("parallel");
    let mut yaml = String::from("mcp:\n  servers:\n");
    for i in 0..5 {
        yaml.push_str(&demo_server(
            &format!("slow{i}"),
            &["--init-delay-ms", "1000"],
            "",
            &m,
        ));
    }
    let cfg = write_config(&yaml);
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 0, "{report:#}");
    for s in report["servers"].as_array().unwrap() {
        assert_eq!(s["status"], "ready");
        assert!(s["phases"]["handshake_ms"].as_u64().unwrap() >= 1000);
    }
    // Sequential would be over 5 s; parallel is one delay plus start-up.
    let elapsed = report["elapsed_ms"].as_u64().unwrap();
    assert!(elapsed < 3_000, "elapsed_ms {elapsed} is not close to 1 s");
    assert_eq!(report["deadline_ms"], 60_000);
}

#[test]
fn every_fault_gets_its_class_and_the_rest_start_anyway() {
    let m = marker("faults");
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&demo_server("good", &[], "", &m));
    yaml.push_str(&demo_server(
        "exits",
        &["--exit-before-init", "3", "--stderr", "boom"],
        "",
        &m,
    ));
    yaml.push_str(&format!(
        "    - name: missing\n      command: /nonexistent\n      env: {{AIMON_TEST_MARKER: {m}}}\n"
    ));
    yaml.push_str(&demo_server(
        "hangs",
        &["--hang-init"],
        "request_timeout: 2s",
        &m,
    ));
    yaml.push_str(&demo_server("banner", &["--garbage-stdout"], "", &m));
    yaml.push_str(&demo_server(
        "banner-hangs",
        &["--garbage-stdout", "--hang-init"],
        "request_timeout: 1s",
        &m,
    ));
    yaml.push_str(&demo_server(
        "slowlist",
        &["--tools-delay-ms", "5000"],
        "request_timeout: 1s",
        &m,
    ));
    yaml.push_str(&demo_server("child", &["--spawn-child", "987"], "", &m));
    let cfg = write_config(&yaml);
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 1, "{report:#}");

    for ok in ["good", "banner", "child"] {
        assert_eq!(server(&report, ok)["status"], "ready", "{ok}: {report:#}");
    }

    let exits = server(&report, "exits");
    assert_eq!(exits["status"], "failed");
    assert_eq!(exits["failure"]["class"], "exited", "{exits:#}");
    assert_eq!(exits["failure"]["exit_status"]["code"], 3, "{exits:#}");
    let tail: Vec<&str> = exits["failure"]["stderr_tail"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    assert!(tail.iter().any(|l| l.contains("boom")), "{exits:#}");

    let missing = server(&report, "missing");
    assert_eq!(
        missing["failure"]["class"], "command_not_found",
        "{missing:#}"
    );
    assert_eq!(missing["failure"]["phase"], "spawn");
    assert!(missing["phases"]["spawn_ms"].is_null());

    let hangs = server(&report, "hangs");
    assert_eq!(hangs["failure"]["class"], "handshake_timeout", "{hangs:#}");
    assert_eq!(hangs["failure"]["phase"], "handshake");
    assert!(hangs["phases"]["handshake_ms"].is_null());

    let banner = server(&report, "banner");
    let warning = banner["warnings"][0].as_str().unwrap_or_default();
    assert!(warning.contains("demo-server: starting up"), "{banner:#}");

    // A handshake that fails after garbage on stdout quotes the garbage in its message.
    let banner_hangs = server(&report, "banner-hangs");
    assert_eq!(banner_hangs["failure"]["class"], "handshake_timeout");
    let message = banner_hangs["failure"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("demo-server: starting up"),
        "{banner_hangs:#}"
    );

    let slowlist = server(&report, "slowlist");
    assert_eq!(slowlist["failure"]["class"], "list_timeout", "{slowlist:#}");
    assert!(slowlist["phases"]["handshake_ms"].is_u64());
    assert!(slowlist["phases"]["list_tools_ms"].is_null());

    // The hung server was given up on at its 2 s request timeout, not at the 60 s deadline.
    let elapsed = report["elapsed_ms"].as_u64().unwrap();
    assert!((1_900..10_000).contains(&elapsed), "elapsed_ms {elapsed}");

    let left = wait_gone(&m, Duration::from_secs(1));
    assert!(left.is_empty(), "processes left behind: {left:?}");
}

#[test]
fn startup_budget_caps_the_deadline_and_abandoned_servers_are_killed() {
    let m = marker("budget");
    let mut yaml = String::from("mcp:\n  startup_budget: 1500ms\n  servers:\n");
    yaml.push_str(&demo_server("quick", &[], "", &m));
    yaml.push_str(&demo_server(
        "late",
        &["--init-delay-ms", "4000", "--spawn-child", "988"],
        "",
        &m,
    ));
    let cfg = write_config(&yaml);
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 1);
    assert_eq!(report["deadline_ms"], 1_500);
    assert_eq!(server(&report, "quick")["status"], "ready");
    let late = server(&report, "late");
    assert_eq!(late["failure"]["class"], "deadline", "{late:#}");
    assert_eq!(late["failure"]["phase"], "handshake", "{late:#}");
    assert!(report["elapsed_ms"].as_u64().unwrap() < 3_000);
    let left = wait_gone(&m, Duration::from_secs(1));
    assert!(left.is_empty(), "processes left behind: {left:?}");
}

#[test]
fn lying_annotations_are_ignored_unless_trusted() {
    let m = marker("lie");
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&demo_server("liar", &["--lie"], "", &m));
    yaml.push_str(&demo_server(
        "trusted-liar",
        &["--lie"],
        "annotation_trust: trust",
        &m,
    ));
    yaml.push_str(&demo_server(
        "bare",
        &["--no-annotations"],
        "annotation_trust: trust",
        &m,
    ));
    let cfg = write_config(&yaml);
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 0, "{report:#}");
    let tools = &report["tools"];
    for name in ["echo", "add", "write_note", "delete_note", "slow"] {
        let t = tool(tools, &format!("mcp__liar__{name}"));
        assert_eq!(t["side_effect"], "mutating", "{t:#}");
        assert_eq!(t["destructive"], true, "{t:#}");
        assert_eq!(t["trust"], "ignore");
        assert!(
            t["provenance"].as_str().unwrap().contains("ignore"),
            "{t:#}"
        );
    }
    for name in ["write_note", "delete_note"] {
        let t = tool(tools, &format!("mcp__trusted-liar__{name}"));
        assert_eq!(t["side_effect"], "read_only", "{t:#}");
        assert_eq!(t["destructive"], false, "{t:#}");
        assert_eq!(t["annotations"]["readOnlyHint"], true);
    }
    // No annotations under trust: the MCP defaults (not read-only, destructive).
    let t = tool(tools, "mcp__bare__echo");
    assert_eq!(t["side_effect"], "mutating");
    assert_eq!(t["destructive"], true);
    assert!(t["annotations"].is_null());
    // Local tools are listed beside them, with no server.
    let read = tool(tools, "read");
    assert!(read["server"].is_null());
    assert_eq!(read["side_effect"], "read_only");
}

#[test]
fn a_config_error_exits_2_with_file_line_col() {
    let cfg = write_config("mcp:\n  servers:\n    - name: Bad_Name\n      command: x\n");
    let out = run(&["check"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let expected = format!("{}:3:13:", cfg.path.display());
    assert!(err.contains(&expected), "expected {expected} in {err}");
}

#[test]
fn an_empty_server_list_is_valid() {
    let cfg = write_config("mcp:\n  servers: []\n");
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 0);
    assert_eq!(report["servers"].as_array().unwrap().len(), 0);
    // The local tools alone: `read` by default (bash only when policy.local_tools lists it).
    let tools = report["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{tools:#?}");
    assert_eq!(tools[0]["name"], "read");
    assert_eq!(tools[0]["local"], true);
}

#[test]
fn the_log_is_kept_owner_only_by_default() {
    // Without --log-file the log goes under the state folder: made 0700, the file 0600.
    use std::os::unix::fs::PermissionsExt;
    let state = tempfile::tempdir().unwrap();
    let cfg = write_config("mcp:\n  servers: []\n");
    let out = std::process::Command::new(bin())
        .args(["--config", cfg.path.to_str().unwrap(), "check"])
        .env("XDG_STATE_HOME", state.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = state.path().join("aimon-console");
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("aimon-console.log")), 0o600);
}
