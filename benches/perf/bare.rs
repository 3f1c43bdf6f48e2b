//! The physical limit of a stdio server: a bare JSON-RPC loop over the same pipe, no SDK, no
//! stack. The handshake is done by hand, then `tools/call` lines are written and the answers
//! read, one at a time or with a window of requests in flight.
//!
//! It speaks the protocol revision it is told to: the one the stack negotiated with the same
//! server, so that both write the same requests and the server does the same work for each.
//! From 2026-07-28 on there is no `initialize`: `server/discover`, and every request carries the
//! client's context in `_meta` (SEP-2575), which makes a request about three times as long.
//!
//! Blocking std I/O on one thread: nothing between the pipe and the loop but a `BufReader`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use serde_json::{json, Value};

use crate::report::CallStats;
use crate::ServerCmd;

/// A server process spoken to by hand.
pub struct BareServer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    line: String,
    /// The `_meta` every request carries besides its progress token (empty before 2026-07-28).
    context: serde_json::Map<String, Value>,
}

/// The first revision without `initialize`, whose requests carry the client's context.
pub const DISCOVER_REVISION: &str = "2026-07-28";
/// The last revision with `initialize`.
pub const INITIALIZE_REVISION: &str = "2025-11-25";

/// The client's context a request carries in `_meta` from 2026-07-28 on, as the stack sends it
/// (`aimon_console::mcp::handler`), with the `capabilities` it declared on that transport.
pub fn client_context(revision: &str, capabilities: &Value) -> serde_json::Map<String, Value> {
    let client_info = json!({"name": "aimon-console", "version": env!("CARGO_PKG_VERSION")});
    json!({
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": client_info,
        "io.modelcontextprotocol/protocolVersion": revision,
    })
    .as_object()
    .cloned()
    .unwrap_or_default()
}

impl BareServer {
    /// Spawns `cmd` and does the handshake of `revision` (`server/discover` from 2026-07-28
    /// on, `initialize` before).
    pub fn start(cmd: &ServerCmd, revision: &str) -> std::io::Result<BareServer> {
        let mut child = Command::new(&cmd.command)
            .args(&cmd.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other("pipes were not created"));
        };
        let mut server = BareServer {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            next_id: 0,
            line: String::new(),
            context: serde_json::Map::new(),
        };
        // What the stack sends (`aimon_console::mcp::handler`), so the server sees the same.
        let capabilities = json!({"elicitation": {"form": {}}, "roots": {}, "sampling": {}});
        let client_info = json!({"name": "aimon-console", "version": env!("CARGO_PKG_VERSION")});
        if revision == DISCOVER_REVISION {
            server.context = client_context(revision, &capabilities);
            let discover = json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover",
                "params": {"_meta": server.context}});
            server.send(&discover)?;
            server.read_response(0)?;
        } else {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": revision,
                "capabilities": capabilities,
                "clientInfo": client_info,
            }});
            server.send(&init)?;
            server.read_response(0)?;
            server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        }
        Ok(server)
    }

    fn send(&mut self, message: &Value) -> std::io::Result<()> {
        let mut bytes = serde_json::to_vec(message).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        self.stdin.write_all(&bytes)?;
        self.stdin.flush()
    }

    /// Reads lines until a response arrives; returns its id (notifications are skipped).
    fn read_any_response(&mut self) -> std::io::Result<u64> {
        loop {
            self.line.clear();
            if self.stdout.read_line(&mut self.line)? == 0 {
                return Err(std::io::Error::other("the server closed stdout"));
            }
            let Ok(message) = serde_json::from_str::<Value>(&self.line) else {
                continue;
            };
            if message.get("method").is_some() {
                // A server request (server-everything asks for roots, id 0): refuse it.
                if let Some(id) = message.get("id") {
                    let refusal = json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": -32601, "message": "not supported"}});
                    self.send(&refusal)?;
                }
                continue;
            }
            if let Some(id) = message.get("id").and_then(Value::as_u64) {
                if message.get("error").is_some() {
                    return Err(std::io::Error::other(format!(
                        "error answer: {}",
                        self.line
                    )));
                }
                return Ok(id);
            }
        }
    }

    fn read_response(&mut self, id: u64) -> std::io::Result<()> {
        loop {
            if self.read_any_response()? == id {
                return Ok(());
            }
        }
    }

    fn call_message(&mut self, tool: &str, arguments: &Value) -> (u64, Value) {
        self.next_id += 1;
        let id = self.next_id;
        // A progress token, as the stack asks for progress on every call.
        let mut meta = self.context.clone();
        meta.insert("progressToken".into(), json!(id));
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": meta}});
        (id, message)
    }

    /// `calls` sequential `tools/call`s: write one, read its answer, repeat.
    pub fn sequential(
        &mut self,
        calls: usize,
        tool: &str,
        arguments: &Value,
    ) -> std::io::Result<CallStats> {
        let mut latencies = Vec::with_capacity(calls);
        let started = Instant::now();
        for _ in 0..calls {
            let t = Instant::now();
            let (id, message) = self.call_message(tool, arguments);
            self.send(&message)?;
            self.read_response(id)?;
            latencies.push(t.elapsed());
        }
        Ok(CallStats::new(calls, started.elapsed(), latencies))
    }

    /// `calls` `tools/call`s with `window` of them in flight at any time.
    pub fn windowed(
        &mut self,
        calls: usize,
        window: usize,
        tool: &str,
        arguments: &Value,
    ) -> std::io::Result<CallStats> {
        let mut latencies = Vec::with_capacity(calls);
        let mut in_flight: HashMap<u64, Instant> = HashMap::with_capacity(window);
        let started = Instant::now();
        let mut sent = 0;
        while sent < calls.min(window) {
            let (id, message) = self.call_message(tool, arguments);
            in_flight.insert(id, Instant::now());
            self.send(&message)?;
            sent += 1;
        }
        while !in_flight.is_empty() {
            let id = self.read_any_response()?;
            if let Some(t) = in_flight.remove(&id) {
                latencies.push(t.elapsed());
            }
            if sent < calls {
                let (id, message) = self.call_message(tool, arguments);
                in_flight.insert(id, Instant::now());
                self.send(&message)?;
                sent += 1;
            }
        }
        Ok(CallStats::new(calls, started.elapsed(), latencies))
    }
}

impl Drop for BareServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
