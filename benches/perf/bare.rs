//! The physical limit of a stdio server: a bare JSON-RPC loop over the same pipe, no SDK, no
//! stack. The handshake is done by hand, then `tools/call` lines are written and the answers
//! read, one at a time or with a window of requests in flight.
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
}

impl BareServer {
    /// Spawns `cmd` and does the `initialize` handshake.
    pub fn start(cmd: &ServerCmd) -> std::io::Result<BareServer> {
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
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bare-loop", "version": "0"},
        }});
        server.send(&init)?;
        server.read_response(0)?;
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
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
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
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
