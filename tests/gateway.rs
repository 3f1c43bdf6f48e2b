//! The gateway with real hosts: the official Python SDK client (mcp 2.3.0) and the TypeScript
//! SDK client (@modelcontextprotocol/sdk 1.32.2). Over stdio each starts `aimon-console serve
//! --stdio` as its one server and sees every configured server's tools as `<server>__<tool>`,
//! their hints the traits this console resolved (a liar's read-only claim under `trust: ignore`
//! leaves destructive); a read-only call runs and its result comes back; with no console to
//! approve it, a mutating call is refused with a result that says why. Over HTTP (`serve
//! --http`, the console's `--serve-http` in tmux) the same, and the operator answers.

mod common;
mod peers;

use std::process::{Command, Stdio};

use common::*;
use serde_json::{json, Value};

/// A host program: the Python SDK's or the TypeScript SDK's client.
#[derive(Debug, Clone, Copy)]
enum Host {
    Python,
    TypeScript,
}

impl Host {
    /// The command that runs this host's script with `calls` against `target` (a command line,
    /// or an `http://` URL).
    fn command(self, calls: &Value, target: &[&str]) -> Command {
        let hosts = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hosts");
        let mut cmd = match self {
            Host::Python => {
                let mut cmd = Command::new(peers::sdk());
                cmd.arg(format!("{hosts}/sdk_host.py"));
                cmd
            }
            Host::TypeScript => {
                let mut cmd = Command::new("node");
                cmd.arg(format!("{hosts}/ts_host.cjs"))
                    .env("NODE_PATH", peers::npm());
                cmd
            }
        };
        cmd.arg(calls.to_string()).args(target).stdin(Stdio::null());
        cmd
    }

    /// Runs it to its end: what it saw.
    fn run(self, calls: &Value, target: &[&str], token: Option<&str>) -> Value {
        let mut cmd = self.command(calls, target);
        if let Some(token) = token {
            cmd.env("AIMON_GATEWAY_TOKEN", token);
        }
        let out = cmd.output().expect("run the host");
        assert!(out.status.success(), "{self:?}: {out:?}");
        serde_json::from_slice(&out.stdout).expect("the host's JSON")
    }
}

/// `serve --stdio` on `config` as a host starts it: the command line, its log beside the temp
/// files of the test.
fn serve_stdio(config: &std::path::Path, m: &str) -> Vec<String> {
    let log = std::env::temp_dir().join(format!("{m}.log"));
    vec![
        bin().to_string(),
        "--config".into(),
        config.display().to_string(),
        "--log-file".into(),
        log.display().to_string(),
        "serve".into(),
        "--stdio".into(),
    ]
}

/// The console in tmux on a config of `servers` (entries of `demo_server`), serving hosts on a
/// free loopback port, its state (and the gateway token) under `dir`; once every server is
/// ready. Returns it, the token and the port.
fn console_serving(dir: &std::path::Path, servers: &str) -> (common::tmux::Tmux, String, u16) {
    let state = dir.join("state");
    let config = dir.join("aimon.yaml");
    std::fs::write(&config, format!("mcp:\n  servers:\n{servers}")).unwrap();
    let token = token(&state);
    let port = free_port();
    let t = common::tmux::Tmux::console(
        dir,
        &config,
        &format!("XDG_STATE_HOME={}", state.display()),
        &format!("--serve-http 127.0.0.1:{port}"),
        "1/1 ready",
    );
    (t, token, port)
}

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

/// `aimon-console gateway-token` with its state under `state`.
fn token(state: &std::path::Path) -> String {
    let out = Command::new(bin())
        .arg("gateway-token")
        .env("XDG_STATE_HOME", state)
        .output()
        .expect("gateway-token");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The status code of a raw HTTP/1.1 POST of `body` to `/mcp` at `port`, with `headers`.
fn status_of(port: u16, headers: &[(&str, &str)], body: &[u8]) -> u16 {
    use std::io::{Read, Write};
    let mut socket = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    socket.write_all(request.as_bytes()).unwrap();
    // A refusal may come before the body is all sent: the status line is what counts.
    let _ = socket.write_all(body);
    let mut answer = String::new();
    let _ = socket.read_to_string(&mut answer);
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {answer:?}"))
}

#[test]
fn over_http_the_console_asks_the_operator_for_a_hosts_mutating_call() {
    let m = marker("gateway-http");
    let dir = tempfile::tempdir().unwrap();
    let notes = demo_server("notes", &[], "annotation_trust: trust", &m);
    let (t, token, port) = console_serving(dir.path(), &notes);
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
    // The console's Calls has them all.
    let screen = t.wait_for_row("#4", "ok");
    assert!(screen.contains("echo · notes"), "{screen}");
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
fn a_host_is_told_when_the_tools_on_offer_change() {
    let m = marker("gateway-watch");
    let dir = tempfile::tempdir().unwrap();
    let live = demo_server("live", &["--live-tools"], "annotation_trust: trust", &m);
    let (t, token, port) = console_serving(dir.path(), &live);
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
    assert!(refused.ends_with("`serve` runs unattended (gateway.unattended: rules lets through only what rules and hooks allow)"), "{refused}");
    assert!(wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}
