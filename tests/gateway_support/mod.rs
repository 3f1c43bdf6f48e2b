//! What the gateway's tests share: the hosts (the Python SDK's and the TypeScript SDK's
//! clients, as scripts under `tests/hosts/`), `serve --stdio` as a host starts it, the console
//! serving hosts in tmux, the gateway's token and raw HTTP POSTs.
#![allow(dead_code)] // each test binary uses some of it

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::*;
use crate::peers;

/// A host program: the Python SDK's or the TypeScript SDK's client.
#[derive(Debug, Clone, Copy)]
pub enum Host {
    Python,
    TypeScript,
}

impl Host {
    /// The command that runs this host's script with `calls` against `target` (a command line,
    /// or an `http://` URL).
    pub fn command(self, calls: &Value, target: &[&str]) -> Command {
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
    pub fn run(self, calls: &Value, target: &[&str], token: Option<&str>) -> Value {
        let mut cmd = self.command(calls, target);
        if let Some(token) = token {
            cmd.env("AIMON_GATEWAY_TOKEN", token);
        }
        let out = cmd.output().expect("run the host");
        assert!(out.status.success(), "{self:?}: {out:?}");
        serde_json::from_slice(&out.stdout).expect("the host's JSON")
    }
}

/// `serve --stdio` on `config` as a host starts it: the command line, its log in the tests'
/// scratch folder.
pub fn serve_stdio(config: &std::path::Path, m: &str) -> Vec<String> {
    let log = scratch(&format!("{m}.log"));
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

/// How the console is told to serve hosts.
#[derive(Clone, Copy)]
pub enum Serve {
    /// `--serve-http ADDR` on its command line.
    Flag,
    /// `gateway.listen: ADDR` in its config.
    Listen,
}

/// The console in tmux on a config of `servers` (entries of `demo_server`), serving hosts on a
/// free loopback port as `how` says, its state (and the gateway token) under `dir`; once every
/// server is ready. Returns it, the token and the port.
pub fn console_serving(
    dir: &std::path::Path,
    servers: &str,
    how: Serve,
) -> (crate::common::tmux::Tmux, String, u16) {
    let state = dir.join("state");
    let config = dir.join("aimon.yaml");
    let port = free_port();
    let (listen, flag) = match how {
        Serve::Flag => (String::new(), format!("--serve-http 127.0.0.1:{port}")),
        Serve::Listen => (
            format!("gateway:\n  listen: 127.0.0.1:{port}\n"),
            String::new(),
        ),
    };
    std::fs::write(&config, format!("mcp:\n  servers:\n{servers}{listen}")).unwrap();
    let token = token(&state);
    let t = crate::common::tmux::Tmux::console(
        dir,
        &config,
        &format!("XDG_STATE_HOME={}", state.display()),
        &flag,
        "1/1 ready",
    );
    (t, token, port)
}

/// `aimon-console gateway-token` with its state under `state`.
pub fn token(state: &std::path::Path) -> String {
    let out = Command::new(bin())
        .arg("gateway-token")
        .env("XDG_STATE_HOME", state)
        .output()
        .expect("gateway-token");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The status code of a raw HTTP/1.1 POST of `body` to `/mcp` at `port`, with `headers`.
pub fn status_of(port: u16, headers: &[(&str, &str)], body: &[u8]) -> u16 {
    post(port, headers, body).0
}

/// A raw HTTP/1.1 POST of `body` to `/mcp` at `port`, with `headers`: the status code, and the
/// whole answer.
pub fn post(port: u16, headers: &[(&str, &str)], body: &[u8]) -> (u16, String) {
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
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {answer:?}"));
    (status, answer)
}

/// A stateless (2026-07-28) host's `tools/call` of `tool` with `{"text": text}` at `port`: no
/// handshake, the host named `stateless-host 9` in the call's `_meta`. The status and answer.
pub fn stateless_call(port: u16, token: &str, tool: &str, text: &str) -> (u16, String) {
    let meta = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "stateless-host", "version": "9"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": {"text": text}, "_meta": meta}});
    let bearer = format!("Bearer {token}");
    let headers = [
        ("Authorization", bearer.as_str()),
        ("Mcp-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", tool),
    ];
    post(port, &headers, call.to_string().as_bytes())
}

/// The console asks one question for two calls at once of one host, `a` and `b` (the texts
/// they echo), the other waiting its turn: with the question on screen, it checks there is one
/// question, not "1 of 2", allows it, and allows the other when it asks in turn.
pub fn one_question_at_a_time(t: &crate::common::tmux::Tmux, a: &str, b: &str) {
    let screen = t.screen();
    let (first, second) = if screen.contains(&format!("\"text\": \"{a}\"")) {
        (a, b)
    } else {
        (b, a)
    };
    assert!(screen.contains("┌ Approval needed ─"), "{screen}");
    assert!(
        screen.contains(&format!("\"text\": \"{first}\"")),
        "{screen}"
    );
    t.keys(&["y"]);
    t.wait_for_question(
        &format!("\"text\": \"{second}\""),
        std::time::Duration::from_secs(10),
    );
    t.keys(&["y"]);
}
