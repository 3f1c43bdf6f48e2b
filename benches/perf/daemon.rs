//! `daemon`: the operator API of `aimon-console daemon` (docs/daemon.md), from consoles on its
//! Unix socket. An approval's round trip with two consoles attached: console A calls a
//! mutating tool, console B answers the approval as soon as it sees it, A has the result;
//! held against A calling a read-only tool of the same server through the same daemon (no
//! approval), rounds alternating. And the fan-out: a server's stderr at 10,000 lines a second
//! to 8 consoles reading, every line counted by each, with the daemon's CPU.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::report::{CallStats, Row};

/// The daemon, killed when dropped.
pub struct Daemon(pub Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: kill has no memory preconditions; the pid is our child's.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

pub fn start(binary: &str, dir: &Path, name: &str, server_args: &str) -> (Daemon, PathBuf) {
    let run = dir.join(format!("daemon-{name}"));
    std::fs::create_dir_all(&run).expect("daemon dir");
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("chmod");
    let config = run.join("aimon.yaml");
    let yaml = format!(
        "mcp:\n  servers:\n    - name: notes\n      command: {binary}\n      args: [demo-server{server_args}]\n      annotation_trust: trust\n"
    );
    std::fs::write(&config, yaml).expect("config");
    let socket = run.join("daemon.sock");
    let mut child = Command::new(binary)
        .arg("--config")
        .arg(&config)
        .arg("--log-file")
        .arg(run.join("daemon.log"))
        .args(["daemon", "--socket"])
        .arg(&socket)
        .env("XDG_STATE_HOME", &run)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the daemon");
    let mut line = String::new();
    let stdout = child.stdout.take().expect("stdout");
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("its first line");
    assert!(line.starts_with("listening on "), "{line}");
    (Daemon(child), socket)
}

pub struct Console {
    out: UnixStream,
    lines: BufReader<UnixStream>,
    next: u64,
}

impl Console {
    pub fn attach(socket: &Path, name: &str) -> Console {
        let out = UnixStream::connect(socket).expect("connect");
        let lines = BufReader::new(out.try_clone().expect("clone"));
        let mut console = Console {
            out,
            lines,
            next: 1,
        };
        let client = json!({"name": name, "user": "bench", "host": "here"});
        let id = console.send(
            "initialize",
            json!({"protocol_version": 1, "client": client}),
        );
        console.until(|m| m["id"] == id);
        console
    }

    fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next;
        self.next += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.out, "{line}").expect("send");
        id
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        let n = self.lines.read_line(&mut line).expect("read");
        assert!(n > 0, "the daemon closed the connection");
        serde_json::from_str(&line).expect("JSON")
    }

    fn until(&mut self, test: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self.read();
            if test(&message) {
                return message;
            }
        }
    }

    pub fn ready(&mut self) {
        loop {
            let id = self.send("servers", json!({}));
            let answer = self.until(|m| m["id"] == id);
            if answer["result"]["servers"][0]["status"] == "ready" {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `calls` calls of `tool`, one after another: their latencies.
    pub fn calls(&mut self, calls: usize, tool: &str, arguments: &Value) -> CallStats {
        let mut latencies = Vec::with_capacity(calls);
        let started = Instant::now();
        for _ in 0..calls {
            let at = Instant::now();
            let id = self.send("call", json!({"tool": tool, "arguments": arguments}));
            let done = self.until(|m| m["id"] == id);
            assert_eq!(done["result"]["status"], "ok", "{done}");
            latencies.push(at.elapsed());
        }
        CallStats::new(calls, started.elapsed(), latencies)
    }
}

/// The approval round trip: A's mutating calls, each approved by B, against A's read-only ones.
pub fn approval_rows(binary: &str, dir: &Path, calls: usize) -> Vec<Row> {
    let (daemon, socket) = start(binary, dir, "approve", "");
    let mut a = Console::attach(&socket, "a");
    a.ready();
    let mut b = Console::attach(&socket, "b");
    let approver = std::thread::spawn(move || loop {
        let message = b.read();
        if message["method"] == "closing" {
            return;
        }
        if message["method"] == "event" && message["params"]["type"] == "approval_requested" {
            let id = message["params"]["id"].clone();
            b.send("approve", json!({"id": id, "decision": "allow_once"}));
        }
    });
    let note = json!({"title": "bench", "body": "b"});
    let echo = json!({"text": "hello"});
    let warmup = (calls / 10).max(20);
    a.calls(warmup, "mcp__notes__write_note", &note);
    a.calls(warmup, "mcp__notes__echo", &echo);
    let (mut approved, mut plain) = (CallStats::default(), CallStats::default());
    for _ in 0..5 {
        approved.merge(a.calls(calls, "mcp__notes__write_note", &note));
        plain.merge(a.calls(calls, "mcp__notes__echo", &echo));
    }
    drop(daemon);
    let _ = approver.join();
    let reference = "a read-only call, same daemon";
    let case = "approval round trip, 2 consoles";
    vec![
        Row::new("daemon", case, "p50 ms", approved.quantile_ms(0.5))
            .against(reference, plain.quantile_ms(0.5))
            .no_more_than(5.0, "ms"),
        Row::new("daemon", case, "p99 ms", approved.quantile_ms(0.99))
            .against(reference, plain.quantile_ms(0.99))
            .no_more_than(5.0, "ms"),
    ]
}

/// What one console saw of the numbered stderr lines: how many, and the first and last number.
#[derive(Default, Clone, Copy)]
struct Seen {
    lines: u64,
    first: Option<u64>,
    last: u64,
    dropped: u64,
}

/// 8 consoles reading a server's 10,000 stderr lines a second for `seconds`: the lines each
/// got of those sent meanwhile (the least of the 8), and the daemon's CPU.
pub fn fanout_rows(binary: &str, dir: &Path, seconds: u64) -> Vec<Row> {
    const CONSOLES: usize = 8;
    const RATE: u64 = 10_000;
    let (daemon, socket) = start(binary, dir, "fanout", ", --stderr-rate, \"10000\"");
    let mut consoles = vec![Console::attach(&socket, "c0")];
    consoles[0].ready();
    consoles.extend((1..CONSOLES).map(|i| Console::attach(&socket, &format!("c{i}"))));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let readers: Vec<_> = consoles
        .into_iter()
        .map(|mut console| {
            std::thread::spawn(move || {
                console
                    .out
                    .set_read_timeout(Some(Duration::from_millis(200)))
                    .expect("timeout");
                let mut seen = Seen::default();
                while Instant::now() < deadline {
                    let mut line = String::new();
                    match console.lines.read_line(&mut line) {
                        Ok(0) => break,
                        Ok(_) => {}
                        Err(_) => continue,
                    }
                    let Ok(message) = serde_json::from_str::<Value>(&line) else {
                        continue;
                    };
                    if message["method"] == "dropped" {
                        seen.dropped += message["params"]["count"].as_u64().unwrap_or(0);
                    }
                    let text = message["params"]["line"].as_str().unwrap_or("");
                    if let Some(n) = text.strip_prefix("stderr ").and_then(|n| n.parse().ok()) {
                        seen.lines += 1;
                        seen.first.get_or_insert(n);
                        seen.last = n;
                    }
                }
                seen
            })
        })
        .collect();
    let pid = daemon.0.id();
    let (cpu0, wall0) = (crate::report::ticks(&pid.to_string()), Instant::now());
    let seen: Vec<Seen> = readers
        .into_iter()
        .map(|r| r.join().expect("reader"))
        .collect();
    let cpu = (crate::report::ticks(&pid.to_string()) - cpu0) as f64
        / 100.0
        / wall0.elapsed().as_secs_f64()
        * 100.0;
    drop(daemon);
    let least = seen
        .iter()
        .map(|s| {
            let sent = s.first.map_or(0, |f| s.last - f + 1);
            (s.lines as f64, sent as f64, s.dropped)
        })
        .min_by(|a, b| (a.0 / a.1.max(1.0)).total_cmp(&(b.0 / b.1.max(1.0))))
        .unwrap_or_default();
    let case = format!("{CONSOLES} consoles, {RATE} events/s");
    vec![
        Row::new("daemon", &case, "events a console got", least.0)
            .against("events sent meanwhile", least.1)
            .at_least(1.0),
        Row::new("daemon", &case, "daemon CPU %", cpu),
    ]
}
