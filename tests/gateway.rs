//! The gateway (`serve --stdio`) with a real host: the official Python SDK client (mcp 2.3.0)
//! starts `aimon-console serve --stdio` as its one server. It sees every configured server's
//! tools as `<server>__<tool>`, their hints the traits this console resolved (a liar's read-only
//! claim under `trust: ignore` leaves destructive); a read-only call runs and its result comes
//! back; with no console to approve it, a mutating call is refused with a result that says why.

mod common;
mod peers;

use std::process::{Command, Stdio};

use common::*;
use serde_json::{json, Value};

#[test]
fn a_host_sees_the_resolved_traits_and_only_read_only_calls_run_unattended() {
    let m = marker("gateway");
    let server = |name: &str, flags: &str, more: &str| {
        format!(
            "    - name: {name}\n      command: {}\n      args: [demo-server{flags}]\n      env: {{AIMON_TEST_MARKER: {m}}}\n{more}",
            bin()
        )
    };
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}{}{}policy:\n  local_tools: [read, bash]\n",
        server("notes", "", ""),
        server("notes-trusted", "", "      annotation_trust: trust\n"),
        server("liar", ", --lie", ""),
    ));
    let calls = json!([
        ["notes-trusted__echo", {"text": "through the gateway"}],
        ["notes-trusted__write_note", {"title": "t", "body": "b"}],
        ["liar__echo", {"text": "x"}],
        ["bash", {"command": "true"}],
    ]);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hosts/sdk_host.py");
    let out = Command::new(peers::sdk())
        .arg(script)
        .arg(calls.to_string())
        .arg(bin())
        .arg("--config")
        .arg(&config.path)
        .arg("--log-file")
        .arg(std::env::temp_dir().join(format!("{m}.log")))
        .args(["serve", "--stdio"])
        .stdin(Stdio::null())
        .output()
        .expect("run the SDK host");
    assert!(out.status.success(), "{out:?}");
    let seen: Value = serde_json::from_slice(&out.stdout).expect("the host's JSON");

    // Every server's tools under <server>__<tool>, none of the console's own (read, bash).
    let tools = seen["tools"].as_object().unwrap();
    assert_eq!(tools.len(), 15, "{seen:#}");
    assert!(!tools.contains_key("read") && !tools.contains_key("bash"));
    // The hints are the resolved traits: under trust the server's; under ignore (notes, and the
    // liar whose mutating tools claim to be read-only) mutating and destructive.
    let hints = |name: &str| {
        (
            tools[name]["readOnlyHint"].clone(),
            tools[name]["destructiveHint"].clone(),
        )
    };
    assert_eq!(hints("notes-trusted__echo"), (json!(true), json!(false)));
    assert_eq!(
        hints("notes-trusted__write_note"),
        (json!(false), json!(false))
    );
    assert_eq!(
        hints("notes-trusted__delete_note"),
        (json!(false), json!(true))
    );
    for tool in [
        "notes__echo",
        "notes__write_note",
        "liar__echo",
        "liar__write_note",
    ] {
        assert_eq!(hints(tool), (json!(false), json!(true)), "{tool}: {seen:#}");
    }

    let calls = seen["calls"].as_array().unwrap();
    assert_eq!(
        calls[0],
        json!({"is_error": false, "text": "through the gateway"})
    );
    for (call, tool) in [
        (&calls[1], "notes-trusted__write_note"),
        (&calls[2], "liar__echo"),
    ] {
        assert_eq!(call["is_error"], true, "{seen:#}");
        assert_eq!(
            call["text"],
            format!("refused: {tool} is mutating, and nobody is at a console to approve it (`serve` runs unattended: only read-only tools run)")
        );
    }
    assert_eq!(calls[3]["is_error"], true, "{seen:#}");
    assert!(
        calls[3]["text"]
            .as_str()
            .unwrap()
            .starts_with("no tool named bash"),
        "{seen:#}"
    );
    // The host gone, so are the servers.
    assert!(wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}
