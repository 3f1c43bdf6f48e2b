//! `call` end to end: the gate, the ceiling, approval without a terminal, `--yes`.

mod common;

use std::time::Duration;

use common::*;

fn config(ceiling: &str, m: &str) -> TempConfig {
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&demo_server("demo", &[], "annotation_trust: trust", m));
    yaml.push_str(&format!("policy:\n  side_effect_ceiling: {ceiling}\n"));
    write_config(&yaml)
}

#[test]
fn read_only_call_runs_without_asking() {
    let m = marker("call-ro");
    let cfg = config("mutating", &m);
    let out = run(
        &["call", "mcp__demo__add", "--args", r#"{"a":2,"b":3}"#],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "5");
    assert!(wait_gone(&m, Duration::from_secs(1)).is_empty());
}

#[test]
fn mutating_call_without_a_terminal_is_refused_and_runs_with_yes() {
    let m = marker("call-mut");
    let cfg = config("mutating", &m);
    let args = r#"{"title":"t","body":"b"}"#;
    let out = run(
        &["call", "mcp__demo__write_note", "--args", args],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refused") && err.contains("--yes"), "{err}");
    assert!(out.stdout.is_empty());

    let out = run(
        &["call", "mcp__demo__write_note", "--args", args, "--yes"],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("saved note"));
}

#[test]
fn ceiling_read_only_refuses_mutating_calls_without_a_prompt() {
    let m = marker("call-ceiling");
    let cfg = config("read_only", &m);
    let out = run(
        &[
            "call",
            "mcp__demo__write_note",
            "--args",
            r#"{"title":"t","body":"b"}"#,
            "--yes",
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("side_effect_ceiling") && err.contains("read_only"),
        "{err}"
    );
    assert!(
        !err.contains("allow this call"),
        "no prompt expected: {err}"
    );
}

#[test]
fn a_tool_error_exits_1_and_arguments_that_do_not_fit_exit_2() {
    let m = marker("call-err");
    let cfg = config("mutating", &m);
    let out = run(
        &[
            "call",
            "mcp__demo__delete_note",
            "--args",
            r#"{"title":"nope"}"#,
            "--yes",
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error:"));

    // Like --args that are not JSON: a mistake in the command line, nothing is called.
    let out = run(
        &["call", "mcp__demo__add", "--args", r#"{"a":"x"}"#],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("input schema"));

    let out = run(&["call", "mcp__demo__nope"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tool named"));

    // A slip is answered with the nearest names: in the tool's name, its server's, or the
    // `mcp__` prefix left out.
    for (tool, meant) in [
        ("mcp__demo__ecoh", "(did you mean mcp__demo__echo?)"),
        (
            "mcp__dmeo__echo",
            "no server dmeo (did you mean mcp__demo__echo?)",
        ),
        ("demo__echo", "(did you mean mcp__demo__echo?)"),
    ] {
        let out = run(&["call", tool], Some(&cfg.path));
        assert_eq!(out.status.code(), Some(1), "{tool}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("no tool named {tool}")) && stderr.contains(meant),
            "{tool}: {stderr}"
        );
    }
}

#[test]
fn call_json_reports_status_and_result() {
    let m = marker("call-json");
    let cfg = config("mutating", &m);
    let out = run(
        &[
            "call",
            "mcp__demo__echo",
            "--args",
            r#"{"text":"hi"}"#,
            "--json",
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "ok");
    assert_eq!(v["result"]["text"], "hi");
    assert_eq!(v["result"]["is_error"], false);
}

/// A tool whose description is poisoned (`demo-server --poison`: Invariant Labs' published
/// `<IMPORTANT>` payload in `add`'s description) is flagged in `tools --json`, and though
/// trusted and read-only it asks before it runs: refused without a terminal, run with `--yes`;
/// under `policy.flagged: deny` it is denied even with `--yes`. The other tools are not flagged.
#[test]
fn a_poisoned_tool_is_flagged_and_asks_and_policy_flagged_deny_denies_it() {
    let m = marker("call-poison");
    let yaml = |policy: &str| {
        format!(
            "mcp:\n  servers:\n{}{policy}",
            demo_server("demo", &["--poison"], "annotation_trust: trust", &m)
        )
    };
    let cfg = write_config(&yaml(""));
    let out = run(&["tools", "--json"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    for tool in listed["tools"].as_array().expect("tools") {
        let warnings = tool["warnings"].as_array().expect("warnings");
        if tool["name"] == "mcp__demo__add" {
            let reasons: Vec<&str> = warnings
                .iter()
                .filter_map(|w| w["reason"].as_str())
                .collect();
            for wanted in [
                "an instruction block for the model (<IMPORTANT>)",
                "demands a step before the tool is used",
                "reaches for an MCP client's config",
                "keeps something from the user",
            ] {
                assert!(reasons.contains(&wanted), "{wanted}: {reasons:?}");
            }
            assert!(
                warnings.iter().all(|w| w["field"] == "description"),
                "{warnings:?}"
            );
        } else {
            assert!(warnings.is_empty(), "{tool}");
        }
    }
    let add = ["call", "mcp__demo__add", "--args", r#"{"a":2,"b":3}"#];
    let out = run(&add, Some(&cfg.path));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("flagged") && err.contains("--yes"), "{err}");
    let out = run(&[&add[..], &["--yes"]].concat(), Some(&cfg.path));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "5");

    let cfg = write_config(&yaml("policy:\n  flagged: deny\n"));
    let out = run(&[&add[..], &["--yes"]].concat(), Some(&cfg.path));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("mcp__demo__add is flagged (description: ")
            && err.contains("policy.flagged is deny"),
        "{err}"
    );
    assert!(wait_gone(&m, Duration::from_secs(1)).is_empty());
}

/// A server whose instructions carry terminal escapes (`demo-server --evil`): its report says
/// they are flagged, and each of its tools carries the same finding for its description.
#[test]
fn a_servers_flagged_instructions_are_said_in_its_report() {
    let m = marker("check-evil");
    let yaml = format!(
        "mcp:\n  servers:\n{}",
        demo_server("evil", &["--evil"], "", &m)
    );
    let cfg = write_config(&yaml);
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 0, "{report:#}");
    let evil = server(&report, "evil");
    let warnings: Vec<&str> = evil["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert!(
        warnings.iter().any(|w| {
            w.starts_with(
            "its instructions are flagged (tool poisoning): instructions: terminal escape sequences"
        )
        }),
        "{warnings:?}"
    );
    // Its tools; the local `read` tool is ours and never flagged.
    let tools = report["tools"].as_array().expect("tools");
    assert!(tools
        .iter()
        .any(|t| t["name"] == "read" && t["warnings"] == serde_json::json!([])));
    for tool in tools.iter().filter(|t| t["server"] == "evil") {
        assert!(
            tool["warnings"]
                .as_array()
                .expect("warnings")
                .iter()
                .any(|w| w["field"] == "description"
                    && w["reason"]
                        == "terminal escape sequences (text hidden or rewritten on screen)"),
            "{tool:#}"
        );
    }
    assert!(wait_gone(&m, Duration::from_secs(1)).is_empty());
}
