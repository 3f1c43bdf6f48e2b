//! The gateway with real hosts over stdio and headless HTTP: the official Python SDK client
//! (mcp 2.3.0) and the TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2). Each starts
//! `aimon-console serve --stdio` as its one server and sees every configured server's tools as
//! `<server>__<tool>`, their hints the traits this console resolved (a liar's read-only claim
//! under `trust: ignore` leaves destructive); a read-only call runs and its result comes back;
//! with no console to approve it, a mutating call is refused with a result that says why (or,
//! under `gateway.unattended: rules`, runs when a rule allows it). 1,000 calls at once from four
//! hosts over `serve --http`; `gateway.naming`'s collisions; a host's cancellation of its call
//! over stdio.

mod common;
mod gateway_support;
mod peers;

use std::process::{Command, Stdio};

use common::*;
use gateway_support::*;
use serde_json::{json, Value};

#[test]
fn a_host_sees_the_resolved_traits_and_only_read_only_calls_run_unattended() {
    let m = marker("gateway");
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}{}{}policy:\n  local_tools: [read, bash]\n",
        demo_server("notes", &[], "", &m),
        demo_server("notes-trusted", &[], "annotation_trust: trust", &m),
        demo_server("liar", &["--lie"], "", &m),
    ));
    let calls = json!([
        ["notes-trusted__echo", {"text": "through the gateway"}],
        ["notes-trusted__write_note", {"title": "t", "body": "b"}],
        ["liar__echo", {"text": "x"}],
        ["bash", {"command": "true"}],
    ]);
    let target = serve_stdio(&config.path, &m);
    let target: Vec<&str> = target.iter().map(String::as_str).collect();
    for host in [Host::Python, Host::TypeScript] {
        let seen = host.run(&calls, &target, None);
        sees_resolved_traits_and_refusals(&seen);
    }
    // The hosts gone, so are the servers.
    assert!(wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}

/// What a host saw over stdio: the tools and their hints, the read-only call's result, the
/// refusals.
fn sees_resolved_traits_and_refusals(seen: &Value) {
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
            format!("refused: {tool} is mutating, and nobody is at a console to approve it (`serve` runs unattended, and gateway.unattended is refuse: only read-only tools run)")
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
}

#[test]
fn a_thousand_calls_at_once_from_four_hosts_are_each_answered_with_their_own_result() {
    let m = marker("gateway-flood");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}",
        demo_server("notes", &[], "annotation_trust: trust", &m)
    ));
    let token = token(&state);
    let port = free_port();
    let mut serve = Command::new(bin())
        .arg("--config")
        .arg(&config.path)
        .arg("--log-file")
        .arg(dir.path().join("serve.log"))
        .args(["serve", "--http", &port.to_string()])
        .env("XDG_STATE_HOME", &state)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve --http");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "serve --http never listened"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let floods: Vec<_> = ["a", "b", "c", "d"]
        .into_iter()
        .map(|host| {
            let child = Command::new(peers::sdk())
                .arg(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/tests/hosts/sdk_flood.py"
                ))
                .args([url.as_str(), "notes__echo", host, "250"])
                .env("AIMON_GATEWAY_TOKEN", &token)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start a flooding host");
            (host, child)
        })
        .collect();
    for (host, child) in floods {
        let out = child.wait_with_output().expect("the host ends");
        assert!(out.status.success(), "{host}: {out:?}");
        let seen: Value = serde_json::from_slice(&out.stdout).expect("the host's JSON");
        assert_eq!(seen["errors"], json!([]), "{host}");
        let answers = seen["answers"].as_object().unwrap();
        assert_eq!(answers.len(), 250, "{host}: every call answered");
        for (asked, answered) in answers {
            assert!(asked.starts_with(&format!("{host}-")));
            assert_eq!(answered, asked, "{host}: an answer of another call");
        }
    }
    // SIGTERM ends the serving and closes the servers.
    let pid = i32::try_from(serve.id()).unwrap();
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = serve.wait().expect("serve ends");
    assert!(status.success(), "{status:?}");
    assert!(wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}

#[test]
fn under_unattended_rules_a_rule_lets_a_hosts_mutating_call_run_and_what_would_ask_is_refused() {
    let m = marker("gateway-rules");
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}policy:\n  rules:\n    - {{tool: mcp__notes__write_note, decision: allow}}\ngateway:\n  unattended: rules\n",
        demo_server("notes", &[], "annotation_trust: trust", &m)
    ));
    let target = serve_stdio(&config.path, &m);
    let target: Vec<&str> = target.iter().map(String::as_str).collect();
    let calls = json!([
        ["notes__write_note", {"title": "by rule", "body": "b"}],
        ["notes__delete_note", {"title": "by rule"}],
    ]);
    let seen = Host::Python.run(&calls, &target, None);
    let calls = seen["calls"].as_array().unwrap();
    assert_eq!(
        calls[0],
        json!({"is_error": false, "text": "saved note \"by rule\""})
    );
    assert_eq!(calls[1]["is_error"], true, "{seen:#}");
    let refused = calls[1]["text"].as_str().unwrap();
    assert!(
        refused.starts_with("refused: nobody is at a console to approve it: mcp__notes__delete_note is MUTATING and DESTRUCTIVE"),
        "{refused}"
    );
    assert!(
        refused
            .ends_with(" (gateway.unattended: rules lets through only what rules and hooks allow)"),
        "{refused}"
    );
    assert!(wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}

#[test]
fn under_a_naming_without_the_server_the_first_of_two_tools_of_one_name_is_offered() {
    let m = marker("gateway-naming");
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}{}gateway:\n  naming: \"{{tool}}\"\n",
        demo_server("a", &[], "annotation_trust: trust", &m),
        demo_server("b", &[], "", &m)
    ));
    let target = serve_stdio(&config.path, &m);
    let target: Vec<&str> = target.iter().map(String::as_str).collect();
    let seen = Host::Python.run(&json!([["echo", {"text": "plain"}]]), &target, None);
    // `a` trusts its annotations (echo read-only), `b` does not (echo destructive): the one
    // `echo` offered is a's, and the call runs unattended because it is read-only.
    assert_eq!(
        seen["tools"]["echo"],
        json!({"readOnlyHint": true, "destructiveHint": false}),
        "{seen:#}"
    );
    assert!(seen["tools"].get("a__echo").is_none(), "{seen:#}");
    assert_eq!(seen["calls"], json!([{"is_error": false, "text": "plain"}]));
    assert!(wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}

#[test]
fn a_host_that_subscribed_to_a_resource_is_told_of_its_updates_until_it_unsubscribes() {
    let m = marker("gateway-subscribe");
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}policy:\n  rules:\n    - {{tool: mcp__notes__write_note, decision: allow}}\ngateway:\n  unattended: rules\n",
        demo_server("notes", &[], "annotation_trust: trust", &m)
    ));
    let target = serve_stdio(&config.path, &m);
    let out = Command::new(peers::sdk())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/hosts/sdk_subscribe.py"
        ))
        .args(["notes", "watched"])
        .args(&target)
        .stdin(Stdio::null())
        .output()
        .expect("run the host");
    assert!(out.status.success(), "{out:?}");
    let seen: Value = serde_json::from_slice(&out.stdout).expect("the host's JSON");
    // Three writes: before the subscription, during it, after it; one update, by the URI the
    // host knows the note by.
    assert_eq!(
        seen,
        json!({"uri": "aimon://notes/demo://notes/watched",
               "updated": ["aimon://notes/demo://notes/watched"]})
    );
    assert!(wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}

#[test]
fn a_call_its_host_cancels_over_stdio_ends_unanswered_and_frees_the_hosts_turn() {
    let m = marker("gateway-cancel");
    // One call of a host at a time: the next waits for the cancelled one to end.
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}gateway:\n  max_calls_per_host: 1\n",
        demo_server("notes", &[], "annotation_trust: trust", &m),
    ));
    let mut host = LineHost::join(&serve_stdio(&config.path, &m));
    let call = |id: u64, tool: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}})
    };
    // A first call answered: the host has joined (its calls are taken off the line directly).
    host.send(&call(1, "notes__echo", json!({"text": "joined"})));
    host.answer(1, std::time::Duration::from_secs(30));
    // A call of ten minutes, then its cancellation.
    host.send(&call(
        2,
        "notes__slow",
        json!({"steps": 600, "step_ms": 1000}),
    ));
    std::thread::sleep(std::time::Duration::from_millis(300));
    host.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "the test cancels it"}}),
    );
    // The next call runs (the turn the slow one held is free) and is the only one answered.
    host.send(&call(3, "notes__echo", json!({"text": "after the cancel"})));
    let (answer, before) = host.answer(3, std::time::Duration::from_secs(30));
    assert_eq!(
        answer["result"]["content"][0]["text"], "after the cancel",
        "{answer}"
    );
    assert!(
        before.iter().all(|m| m["id"] != 2),
        "the cancelled call was answered: {before:?}"
    );
    drop(host);
    assert!(wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}
