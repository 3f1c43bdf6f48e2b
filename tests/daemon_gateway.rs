//! The gateway in the daemon (`gateway.listen`): a real MCP host (the official Python SDK)
//! calls through the daemon's gate, its mutating call is asked of the daemon's consoles (who
//! asked: the host), and the host's calls and a console's share one server process.

mod common;
mod gateway_support;
mod peers;

use std::process::Stdio;

use common::daemon::{daemon, is_event, Console};
use common::{bin, free_port, write_config};
use gateway_support::Host;
use serde_json::{json, Value};

#[test]
fn hosts_and_consoles_share_the_daemons_servers_and_its_consoles_answer_for_hosts() {
    let port = free_port();
    let bin = bin();
    let config = write_config(&format!(
        "mcp:
  servers:
    - name: notes
      command: {bin}
      args: [demo-server]
      annotation_trust: trust
gateway:
  listen: 127.0.0.1:{port}
"
    ));
    let (_daemon, socket) = daemon(&config);
    let token = std::fs::read_to_string(socket.with_file_name("aimon-console/gateway-token"))
        .expect("the gateway's token, in the daemon's state folder");
    let mut a = Console::connect(&socket);
    a.initialize("console-a");
    a.ready("notes");

    // A host writes a note: the daemon asks its consoles, naming the host.
    let calls = json!([["notes__write_note", {"title": "pool", "body": "b"}]]);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let host = Host::Python
        .command(&calls, &[&url])
        .env("AIMON_GATEWAY_TOKEN", token.trim())
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
