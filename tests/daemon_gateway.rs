//! The gateway in the daemon (`gateway.listen`): a real MCP host (the official Python SDK)
//! calls through the daemon's gate, its mutating call is asked of the daemon's consoles (who
//! asked: the host), and the host's calls and a console's share one server process.

mod common;
mod gateway_support;
mod peers;

use std::io::BufRead;
use std::process::Stdio;

use common::daemon::{daemon, is_event, notes_config, Console};
use common::free_port;
use gateway_support::Host;
use serde_json::{json, Value};

#[test]
fn hosts_and_consoles_share_the_daemons_servers_and_its_consoles_answer_for_hosts() {
    let gateway = gateway_daemon("");
    let mut a = Console::connect(&gateway.socket);
    a.initialize("console-a");
    a.ready("notes");

    // A host writes a note: the daemon asks its consoles, naming the host.
    let calls = json!([["notes__write_note", {"title": "pool", "body": "b"}]]);
    let host = Host::Python
        .command(&calls, &[&gateway.url])
        .env("AIMON_GATEWAY_TOKEN", &gateway.token)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the SDK host");
    let asked = a.until("the host's approval", |m| is_event(m, "approval_requested"));
    assert_eq!(asked["params"]["origin"]["by"], "host", "{asked}");
    assert_eq!(asked["params"]["tool"]["name"], "mcp__notes__write_note");
    let id = asked["params"]["id"].as_u64().unwrap();
    a.call("approve", json!({"id": id, "decision": "allow_once"}));
    let out = host.wait_with_output().expect("the host ends");
    assert!(out.status.success(), "{out:?}");
    let seen: Value = serde_json::from_slice(&out.stdout).expect("the host's JSON");
    assert_eq!(
        seen["calls"][0],
        json!({"is_error": false, "text": "saved note \"pool\""})
    );

    // The console deletes the host's note: one server process holds it for both.
    let delete = a.send(
        "call",
        json!({"tool": "mcp__notes__delete_note", "arguments": {"title": "pool"}}),
    );
    let asked = a.until("the console's approval", |m| {
        is_event(m, "approval_requested")
    });
    let id = asked["params"]["id"].as_u64().unwrap();
    a.call("approve", json!({"id": id, "decision": "allow_once"}));
    let done = a.until("the delete's end", |m| m["id"] == delete);
    assert_eq!(done["result"]["status"], "ok", "{done}");
}

/// With no console attached, a host's calls follow `gateway.unattended` as under `serve`.
/// Under `refuse` (the default) its mutating call is refused before it reaches the server, and
/// a read-only one runs. Under `rules` a mutating call a rule allows runs, and one that would
/// ask is refused at once instead of waiting for a console that is not there.
#[test]
fn with_no_console_attached_a_hosts_calls_follow_gateway_unattended() {
    let refuse = unattended_daemon("");
    let calls = json!([
        ["notes__write_note", {"title": "t", "body": "b"}],
        ["notes__echo", {"text": "read-only"}]
    ]);
    let seen = Host::Python.run(&calls, &[&refuse.url], Some(&refuse.token));
    assert_eq!(
        seen["calls"][0],
        json!({"is_error": true, "text": "refused: notes__write_note is mutating, and nobody is at a console to approve it (no console is attached to the daemon, and gateway.unattended is refuse: only read-only tools run)"}),
        "{seen:#}"
    );
    assert_eq!(
        seen["calls"][1],
        json!({"is_error": false, "text": "read-only"}),
        "{seen:#}"
    );

    let rules = unattended_daemon(
        "  unattended: rules
policy:
  rules:
    - {tool: mcp__notes__write_note, decision: allow}
",
    );
    let calls = json!([
        ["notes__write_note", {"title": "by rule", "body": "b"}],
        ["notes__delete_note", {"title": "by rule"}]
    ]);
    let seen = Host::Python.run(&calls, &[&rules.url], Some(&rules.token));
    assert_eq!(
        seen["calls"][0],
        json!({"is_error": false, "text": "saved note \"by rule\""}),
        "{seen:#}"
    );
    let refused = seen["calls"][1]["text"].as_str().unwrap();
    assert!(
        refused.starts_with("refused: nobody is at a console to approve it: mcp__notes__delete_note is MUTATING and DESTRUCTIVE"),
        "{seen:#}"
    );
}

/// A daemon on the demo server `notes` serving hosts on a free port (`more` added to its
/// `gateway:` section and after it): the daemon, its socket, the hosts' URL and the token.
struct GatewayDaemon {
    _daemon: common::Background,
    /// Its folder holds the socket and the daemon's state.
    _config: common::TempConfig,
    socket: std::path::PathBuf,
    url: String,
    token: String,
}

fn gateway_daemon(more: &str) -> GatewayDaemon {
    let port = free_port();
    let config = notes_config(&format!("gateway:\n  listen: 127.0.0.1:{port}\n{more}"));
    let (daemon, socket) = daemon(&config);
    let token = std::fs::read_to_string(socket.with_file_name("aimon-console/gateway-token"))
        .expect("the gateway's token, in the daemon's state folder");
    GatewayDaemon {
        _daemon: daemon,
        _config: config,
        socket,
        url: format!("http://127.0.0.1:{port}/mcp"),
        token: token.trim().to_string(),
    }
}

/// [`gateway_daemon`] with its `notes` server ready and no console attached: the one that
/// waited for the server has gone, and the daemon has let it go (it closed its side).
fn unattended_daemon(more: &str) -> GatewayDaemon {
    let gateway = gateway_daemon(more);
    let mut a = Console::connect(&gateway.socket);
    a.initialize("console-a");
    a.ready("notes");
    a.out.shutdown(std::net::Shutdown::Write).unwrap();
    let mut line = String::new();
    while a
        .lines
        .read_line(&mut line)
        .expect("the daemon's last lines")
        > 0
    {
        line.clear();
    }
    gateway
}
