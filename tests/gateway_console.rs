//! The gateway in the console (`--serve-http`, `gateway.listen`) with real hosts, the console
//! in tmux: a host's mutating call waits for `y` or `n` in the approval modal and the host gets
//! the result or the denial; 401, 403 and 413; a 2026-07-28 stateless host; the hosts at the
//! foot of the Servers pane; `tools/list_changed` to a host; one host's calls past its allowance
//! wait while another host's run (a stateless host's allowance kept by its name).

mod common;
mod gateway_support;
mod peers;

use std::process::{Command, Stdio};

use common::*;
use gateway_support::*;
use serde_json::{json, Value};

#[test]
fn over_http_the_console_asks_the_operator_for_a_hosts_mutating_call() {
    let m = marker("gateway-http");
    let dir = tempfile::tempdir().unwrap();
    let notes = demo_server("notes", &[], "annotation_trust: trust", &m);
    let (t, token, port) = console_serving(dir.path(), &notes, Serve::Flag);
    assert_eq!(token.len(), 64);

    // Safe by default: no token, a browser's Origin, a body too big.
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let bearer = format!("Bearer {token}");
    assert_eq!(status_of(port, &[], ping), 401);
    assert_eq!(
        status_of(port, &[("Authorization", "Bearer wrong")], ping),
        401
    );
    assert_eq!(
        status_of(
            port,
            &[
                ("Authorization", &bearer),
                ("Origin", "http://evil.example")
            ],
            ping
        ),
        403
    );
    assert_eq!(
        status_of(
            port,
            &[("Authorization", &bearer)],
            &vec![b' '; 2 * 1024 * 1024]
        ),
        413
    );

    // A host: a read-only call runs at once; a mutating one waits for the operator.
    let calls = json!([
        ["notes__echo", {"text": "read-only"}],
        ["notes__write_note", {"title": "from a host", "body": "b"}],
        ["notes__write_note", {"title": "again", "body": "b"}],
    ]);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let host = Host::Python
        .command(&calls, &[&url])
        .env("AIMON_GATEWAY_TOKEN", &token)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the SDK host");
    let screen = t.wait_for_question("Approval needed", std::time::Duration::from_secs(20));
    assert!(screen.contains("mcp__notes__write_note"), "{screen}");
    assert!(screen.contains("by host mcp"), "{screen}");
    assert!(screen.contains("through the gateway"), "{screen}");
    t.keys(&["y"]);
    // The host's next call asks in turn (the first has run: its note is saved).
    t.wait_for_question("\"title\": \"again\"", std::time::Duration::from_secs(10));
    t.keys(&["n"]);
    t.wait_for_row("#3", "denied");
    t.wait_for_row("#2", "ok");
    let out = host.wait_with_output().expect("the host ends");
    assert!(out.status.success(), "{out:?}");
    let seen: Value = serde_json::from_slice(&out.stdout).expect("the host's JSON");
    let calls = seen["calls"].as_array().unwrap();
    assert_eq!(calls[0], json!({"is_error": false, "text": "read-only"}));
    assert_eq!(
        calls[1],
        json!({"is_error": false, "text": "saved note \"from a host\""})
    );
    assert_eq!(calls[2]["is_error"], true, "{seen:#}");
    assert_eq!(
        calls[2]["text"], "denied by the operator: mcp__notes__write_note",
        "{seen:#}"
    );
    // The TypeScript host over HTTP too: a read-only call at once.
    let seen = Host::TypeScript.run(
        &json!([["notes__echo", {"text": "from ts"}]]),
        &[&url],
        Some(&token),
    );
    assert_eq!(
        seen["calls"][0],
        json!({"is_error": false, "text": "from ts"})
    );
    assert_eq!(
        seen["tools"]["notes__write_note"]["destructiveHint"], false,
        "{seen:#}"
    );
    // A 2026-07-28 host, stateless: no handshake, its name in the call's `_meta`.
    let (status, answer) = stateless_call(port, &token, "notes__echo", "stateless");
    assert_eq!(status, 200, "{answer}");
    assert!(
        answer.contains(r#""content":[{"type":"text","text":"stateless"}]"#),
        "{answer}"
    );
    // The console's Calls has them all.
    let screen = t.wait_for_row("#5", "ok");
    assert!(screen.contains("echo · notes"), "{screen}");
    // The Servers pane's foot lists the hosts, their calls and when they last did something.
    let screen = t.wait_for("hosts at http", std::time::Duration::from_secs(5));
    assert!(screen.contains(&format!("hosts at {url}")), "{screen}");
    assert!(screen.contains("mcp 0.1.0"), "{screen}");
    assert!(screen.contains("3 calls"), "{screen}");
    assert!(screen.contains("1 call ·"), "{screen}");
    assert!(screen.contains("stateless-host 9"), "{screen}");
    // A call's result view names the host that asked.
    t.keys(&["4", "Enter"]);
    let screen = t.wait_for("asked by: host", std::time::Duration::from_secs(5));
    assert!(
        screen.contains("asked by: host mcp 0.1.0, through the gateway"),
        "{screen}"
    );
    t.keys(&["Escape"]);
    t.keys(&["q"]);
    t.wait_for("READY$", std::time::Duration::from_secs(10));
    assert!(wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}

#[test]
fn a_host_is_told_when_the_tools_on_offer_change() {
    let m = marker("gateway-watch");
    let dir = tempfile::tempdir().unwrap();
    let live = demo_server("live", &["--live-tools"], "annotation_trust: trust", &m);
    // The config's gateway.listen serves as --serve-http does.
    let (t, token, port) = console_serving(dir.path(), &live, Serve::Listen);
    // The host adds a tool through the live server's change_tools (the operator allows it);
    // the server announces the change, and the gateway tells the host.
    let host = Command::new(peers::sdk())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/hosts/sdk_watch.py"
        ))
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .arg("live__change_tools")
        .arg(json!({"action": "add", "tool": "fresh"}).to_string())
        .env("AIMON_GATEWAY_TOKEN", &token)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the watching host");
    t.wait_for_question("by host mcp", std::time::Duration::from_secs(20));
    t.keys(&["y"]);
    let out = host.wait_with_output().expect("the host ends");
    assert!(out.status.success(), "{out:?}");
    let seen: Value = serde_json::from_slice(&out.stdout).expect("the host's JSON");
    assert_eq!(seen["call"]["is_error"], false, "{seen:#}");
    assert_eq!(seen["told"], true, "{seen:#}");
    let has = |list: &str| {
        seen[list]
            .as_array()
            .unwrap()
            .iter()
            .any(|name| name == "live__fresh")
    };
    assert!(!has("before") && has("after"), "{seen:#}");
    t.keys(&["q"]);
    t.wait_for("READY$", std::time::Duration::from_secs(10));
    assert!(wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}

#[test]
fn one_hosts_calls_past_its_allowance_wait_and_another_hosts_call_runs_meanwhile() {
    let m = marker("gateway-cap");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let config = dir.path().join("aimon.yaml");
    let port = free_port();
    // `notes` under the default trust: its echo is mutating, so each call asks. `ro` trusts its
    // annotations: its echo is read-only and runs at once.
    std::fs::write(
        &config,
        format!(
            "mcp:\n  servers:\n{}{}gateway:\n  listen: 127.0.0.1:{port}\n  max_calls_per_host: 1\n",
            demo_server("notes", &[], "", &m),
            demo_server("ro", &[], "annotation_trust: trust", &m)
        ),
    )
    .unwrap();
    let token = token(&state);
    let t = common::tmux::Tmux::console(
        dir.path(),
        &config,
        &format!("XDG_STATE_HOME={}", state.display()),
        "",
        "2/2 ready",
    );
    let url = format!("http://127.0.0.1:{port}/mcp");
    // Host A sends two calls at once on one session; its allowance is one.
    let flood = Command::new(peers::sdk())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/hosts/sdk_flood.py"
        ))
        .args([url.as_str(), "notes__echo", "A", "2"])
        .env("AIMON_GATEWAY_TOKEN", &token)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("host A");
    t.wait_for_question("Approval needed", std::time::Duration::from_secs(20));
    // Host B's call runs meanwhile: A's waiting call holds up only A.
    let seen = Host::Python.run(&json!([["ro__echo", {"text": "B"}]]), &[&url], Some(&token));
    assert_eq!(seen["calls"][0], json!({"is_error": false, "text": "B"}));
    // A's second call waits for A's turn, not in the gate; once A's first ran, it asks.
    one_question_at_a_time(&t, "A-0", "A-1");
    let out = flood.wait_with_output().expect("host A ends");
    assert!(out.status.success(), "{out:?}");
    let seen: Value = serde_json::from_slice(&out.stdout).expect("host A's JSON");
    assert_eq!(
        seen["answers"],
        json!({"A-0": "A-0", "A-1": "A-1"}),
        "{seen:#}"
    );
    // A stateless (2026-07-28) host has no session: its allowance is kept by its name. Two
    // calls at once: one asks, the other waits its turn.
    let stateless = |text: &'static str| {
        let token = token.clone();
        std::thread::spawn(move || stateless_call(port, &token, "notes__echo", text))
    };
    let calls = [stateless("S-0"), stateless("S-1")];
    // The question's own line (the hosts at the foot of Servers name the host before it asks).
    t.wait_for_question(
        "by host stateless-host 9",
        std::time::Duration::from_secs(20),
    );
    // The other call of that host has had all the time it needed to arrive (this wait can only
    // hide a failure, never make one): it waits its turn.
    std::thread::sleep(std::time::Duration::from_millis(500));
    one_question_at_a_time(&t, "S-0", "S-1");
    for call in calls {
        let (status, answer) = call.join().expect("a stateless call");
        assert_eq!(status, 200, "{answer}");
        assert!(answer.contains(r#""isError":false"#), "{answer}");
    }
    t.keys(&["q"]);
    t.wait_for("READY$", std::time::Duration::from_secs(10));
    assert!(wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}
