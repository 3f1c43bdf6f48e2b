//! The call path over Streamable HTTP on loopback: the whole stack against the demo server
//! served with `demo-server --http`, beside a bare loop of hand-written HTTP/1.1 POSTs over one
//! kept-alive socket (the physical limit of that server).
//!
//! Like the stdio bare loop it speaks the revision it is told to: from 2026-07-28 on there is no
//! `initialize` and no session, `server/discover` first, and every request carries the client's
//! context in `_meta` and its method (and a call its tool's name) in `Mcp-Method` / `Mcp-Name`
//! headers, as the stack sends them.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use serde_json::{json, Value};

use crate::report::CallStats;

/// `demo-server --http 127.0.0.1:0`, its URL read from its first stdout line.
pub struct HttpDemo {
    child: Child,
    pub url: String,
}

impl HttpDemo {
    pub fn start(binary: &str) -> HttpDemo {
        let mut child = match Command::new(binary)
            .args(["demo-server", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => panic!("demo-server --http: {e}"),
        };
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = BufReader::new(out).read_line(&mut line);
        }
        let url = line.trim().trim_start_matches("listening on ").to_string();
        assert!(
            url.starts_with("http://"),
            "demo-server --http said {line:?}"
        );
        HttpDemo { child, url }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for HttpDemo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One kept-alive HTTP/1.1 connection speaking MCP by hand.
pub struct BareHttp {
    stream: BufReader<TcpStream>,
    host: String,
    path: String,
    session: Option<String>,
    next_id: u64,
    /// The revision spoken; from 2026-07-28 on, the `_meta` every request carries besides its
    /// progress token.
    revision: String,
    context: serde_json::Map<String, Value>,
    /// `Authorization: Bearer …` on every request (the gateway's token).
    token: Option<String>,
}

impl BareHttp {
    /// Connects and does the handshake of `revision`: `server/discover` from 2026-07-28 on,
    /// `initialize` before.
    pub fn start(url: &str, revision: &str) -> std::io::Result<BareHttp> {
        BareHttp::start_with(url, revision, None)
    }

    /// [`BareHttp::start`] bringing `token` on every request.
    pub fn start_with(url: &str, revision: &str, token: Option<&str>) -> std::io::Result<BareHttp> {
        let rest = url.trim_start_matches("http://");
        let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let stream = TcpStream::connect(host)?;
        stream.set_nodelay(true)?;
        let mut bare = BareHttp {
            stream: BufReader::new(stream),
            host: host.to_string(),
            path: path.to_string(),
            session: None,
            next_id: 0,
            revision: revision.to_string(),
            context: serde_json::Map::new(),
            token: token.map(str::to_string),
        };
        if revision == crate::bare::DISCOVER_REVISION {
            // The capabilities the stack declares over HTTP (captured from its requests).
            let capabilities = json!({"elicitation": {"form": {"schemaValidation": true}, "url": {}}, "roots": {}});
            bare.context = crate::bare::client_context(revision, &capabilities);
            let discover = json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover",
                "params": {"_meta": bare.context}});
            bare.post(&discover)?;
        } else {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": revision, "capabilities": {},
                "clientInfo": {"name": "bare-http", "version": "0"}}});
            bare.post(&init)?;
            bare.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        }
        Ok(bare)
    }

    /// POSTs one message and reads the whole answer (SSE or JSON, chunked or sized).
    fn post(&mut self, message: &Value) -> std::io::Result<String> {
        let body = serde_json::to_vec(message).map_err(std::io::Error::other)?;
        let mut request = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.path,
            self.host,
            body.len()
        );
        if let Some(session) = &self.session {
            request.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
        }
        if let Some(token) = &self.token {
            request.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        if self.revision == crate::bare::DISCOVER_REVISION {
            let method = message["method"].as_str().unwrap_or_default();
            request.push_str(&format!(
                "Mcp-Method: {method}\r\nMcp-Protocol-Version: {}\r\n",
                self.revision
            ));
            if let Some(tool) = message["params"]["name"]
                .as_str()
                .filter(|_| method == "tools/call")
            {
                request.push_str(&format!("Mcp-Name: {tool}\r\n"));
            }
        }
        request.push_str("\r\n");
        let socket = self.stream.get_mut();
        request.push_str(&String::from_utf8_lossy(&body));
        socket.write_all(request.as_bytes())?;
        quick_ack(socket);
        // Status line and headers.
        let mut line = String::new();
        let mut chunked = false;
        let mut length = 0usize;
        loop {
            line.clear();
            quick_ack(self.stream.get_ref());
            if self.stream.read_line(&mut line)? == 0 {
                return Err(std::io::Error::other("connection closed"));
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let lower = header.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("mcp-session-id:") {
                let start = header.len() - v.len();
                self.session = Some(header[start..].trim().to_string());
            } else if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
                chunked = true;
            } else if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                quick_ack(self.stream.get_ref());
                self.stream.read_line(&mut line)?;
                let size = usize::from_str_radix(line.trim(), 16).map_err(std::io::Error::other)?;
                let mut chunk = vec![0; size + 2];
                self.stream.read_exact(&mut chunk)?;
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            body.resize(length, 0);
            self.stream.read_exact(&mut body)?;
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// `calls` sequential `tools/call`s.
    pub fn sequential(
        &mut self,
        calls: usize,
        tool: &str,
        arguments: &Value,
    ) -> std::io::Result<CallStats> {
        let mut latencies = Vec::with_capacity(calls);
        let started = Instant::now();
        for _ in 0..calls {
            self.next_id += 1;
            let mut params = json!({"name": tool, "arguments": arguments});
            if !self.context.is_empty() {
                // A progress token, as the stack asks for progress on every call.
                let mut meta = self.context.clone();
                meta.insert("progressToken".into(), json!(self.next_id));
                params["_meta"] = Value::Object(meta);
            }
            let message = json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                "params": params});
            let t = Instant::now();
            let answer = self.post(&message)?;
            if !answer.contains("\"result\"") {
                return Err(std::io::Error::other(format!("no result in {answer:?}")));
            }
            latencies.push(t.elapsed());
        }
        Ok(CallStats::new(calls, started.elapsed(), latencies))
    }
}

/// Acknowledges at once (Linux `TCP_QUICKACK`, which the kernel clears again after a while): the
/// server writes its answer in several small pieces, and a delayed ACK would hold each one back by
/// ~40 ms under Nagle. An HTTP client library parsing the stream as it comes does not wait for
/// the end of the body; this loop does, so it asks for quick ACKs instead.
fn quick_ack(socket: &TcpStream) {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    // SAFETY: a valid fd and a pointer to a c_int of the given size.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_QUICKACK,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}
