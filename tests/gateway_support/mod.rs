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

/// A host written here, speaking JSON-RPC lines to `serve --stdio` itself: for what the SDK
/// hosts do not do on demand (cancel a call of theirs).
pub struct LineHost {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<Value>,
}

impl LineHost {
    /// Starts `command` (as `serve_stdio` gives it) and joins: `initialize` at 2025-11-25,
    /// then `notifications/initialized`.
    pub fn join(command: &[String]) -> LineHost {
        let mut child = Command::new(&command[0])
            .args(&command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start serve --stdio");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("serve --stdio wrote {line:?}: {e}"));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let mut host = LineHost {
            child,
            stdin,
            lines,
        };
        host.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "line-host", "version": "1"}}}),
        );
        host.answer(0, std::time::Duration::from_secs(30));
        host.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        host
    }

    pub fn send(&mut self, message: &Value) {
        use std::io::Write;
        writeln!(self.stdin, "{message}").expect("write to serve --stdio");
    }

    /// The answer to request `id`, within `wait`; every message before it is returned too.
    pub fn answer(&mut self, id: u64, wait: std::time::Duration) -> (Value, Vec<Value>) {
        let deadline = std::time::Instant::now() + wait;
        let mut before = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let message = self.lines.recv_timeout(left).unwrap_or_else(|e| {
                panic!("no answer to {id} in {wait:?} ({e}); before: {before:?}")
            });
            if message["id"] == id && message.get("method").is_none() {
                return (message, before);
            }
            before.push(message);
        }
    }
}

impl Drop for LineHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
