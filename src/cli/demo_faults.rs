//! Process-level faults of `demo-server` that the handler cannot express: a wrong response id, a
//! huge stdout line, half a message then death, a stderr flood, a closed stdout, a child that
//! ignores SIGTERM, a grandchild that leaves the process group and session, and an exit after a
//! delay (a crash, for the supervisor); and the flags of the wire faults (`demo/wire.rs`) that
//! rewrite what goes over stdio. They exist for the fault matrix (tests/faults.rs) and for
//! trying the console.
//!
//! Separate from `demo_server.rs` so the flag list there stays the server's own and these, which
//! bypass or sabotage the protocol, are read in one place.

use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Context;
use serde_json::{json, Value};

use crate::demo::WireFaults;

/// Exit code of `--partial-json-then-die`.
pub const PARTIAL_JSON_EXIT: i32 = 3;
/// What `--partial-json-then-die` writes (no newline): the start of a response, cut short.
pub const PARTIAL_JSON: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVers"#;

/// Fault flags that act on the process and its pipes.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ProcessFaults {
    /// Speak JSON-RPC by hand and answer every request with a wrong id (never the one asked).
    #[arg(long)]
    pub wrong_id: bool,
    /// Write one non-JSON line of BYTES bytes on stdout before serving.
    #[arg(long, value_name = "BYTES")]
    pub huge_line: Option<usize>,
    /// Read the first request, write half a JSON-RPC response (no newline) and exit with code 3.
    #[arg(long)]
    pub partial_json_then_die: bool,
    /// Write stderr lines as fast as the pipe takes them, for as long as the server runs.
    #[arg(long)]
    pub flood_stderr: bool,
    /// Write RATE numbered stderr lines a second (`stderr N`), paced, for as long as the server
    /// runs: a steady stream of events.
    #[arg(long, value_name = "RATE")]
    pub stderr_rate: Option<u32>,
    /// Close stdout at start-up and keep running (ignoring stdin) until killed.
    #[arg(long)]
    pub close_stdout: bool,
    /// At start-up, start `sleep SECONDS` (in this process group, holding stdout) that ignores SIGTERM.
    #[arg(long, value_name = "SECONDS")]
    pub child_ignores_term: Option<u64>,
    /// At start-up, start `sleep SECONDS` in a session (and process group) of its own, ignoring
    /// SIGTERM and SIGHUP, holding none of the server's pipes: a grandchild that escaped.
    #[arg(long, value_name = "SECONDS")]
    pub setsid_grandchild: Option<u64>,
    /// Exit MS milliseconds after start-up, whatever is going on (calls in flight included), with
    /// the `--exit-code` code: a crash.
    #[arg(long, value_name = "MS")]
    pub exit_after_ms: Option<u64>,
    /// The exit code of `--exit-after-ms`.
    #[arg(
        long,
        value_name = "CODE",
        default_value_t = 1,
        allow_negative_numbers = true,
        requires = "exit_after_ms"
    )]
    pub exit_code: i32,
}

/// Faults of the stdio wire: what the client sends is seen, what the server answers rewritten.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct WireArgs {
    /// Never answer `server/discover` (drop it unread), as an old server that ignores a method it
    /// does not know; `initialize` works.
    #[arg(long)]
    pub ignore_discover: bool,
    /// Put a byte that is not UTF-8 into the answer to METHOD (e.g. tools/call, tools/list).
    #[arg(long, value_name = "METHOD")]
    pub bad_utf8: Option<String>,
    /// Answer METHOD with both `result` and `error`.
    #[arg(long, value_name = "METHOD")]
    pub result_and_error: Option<String>,
    /// Pad every `tools/call` answer to at least BYTES bytes, on one line.
    #[arg(long, value_name = "BYTES")]
    pub huge_answer: Option<usize>,
    /// Add malformed entries to the tool list: no inputSchema, one that is a string, one that is
    /// an array, an entry without a name, an entry that is not an object (over stdio, and over
    /// --http too).
    #[arg(long)]
    pub malformed_tools: bool,
    /// List `echo` a second time (with another description).
    #[arg(long)]
    pub duplicate_tool: bool,
}

impl WireArgs {
    /// What the stdio wire does.
    pub fn faults(&self) -> WireFaults {
        WireFaults {
            ignore_discover: self.ignore_discover,
            bad_utf8: self.bad_utf8.clone(),
            result_and_error: self.result_and_error.clone(),
            huge_answer: self.huge_answer,
            malformed_tools: self.malformed_tools,
            duplicate_tool: self.duplicate_tool,
        }
    }
}

/// What `run` does once the faults are in place.
pub enum Next {
    /// Serve MCP normally.
    Serve,
    /// The fault has taken over the process; exit with this code.
    Exit(i32),
}

impl ProcessFaults {
    /// Puts the faults in place, before any protocol. Faults that replace the server run here
    /// to their end and say how to exit.
    pub fn apply(&self) -> anyhow::Result<Next> {
        if let Some(seconds) = self.child_ignores_term {
            // `trap '' TERM` sets SIGTERM to ignored, and an ignored signal stays ignored across
            // `exec`: the sleep outlives a SIGTERM to the group, only SIGKILL ends it.
            let child = Command::new("sh")
                .arg("-c")
                .arg(format!("trap '' TERM; exec sleep {seconds}"))
                .stdin(Stdio::null())
                .spawn()
                .context("spawning the --child-ignores-term process")?;
            // Not waited for: dropping a `Child` neither kills nor reaps it.
            drop(child);
        }
        if let Some(seconds) = self.setsid_grandchild {
            let mut command = Command::new("sleep");
            command
                .arg(seconds.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            // SAFETY: between fork and exec the child calls only async-signal-safe functions
            // (setsid, signal), touching no memory of the parent's.
            unsafe {
                command.pre_exec(|| {
                    if libc::setsid() < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    libc::signal(libc::SIGTERM, libc::SIG_IGN);
                    libc::signal(libc::SIGHUP, libc::SIG_IGN);
                    Ok(())
                });
            }
            let child = command
                .spawn()
                .context("spawning the --setsid-grandchild process")?;
            // Not waited for: dropping a `Child` neither kills nor reaps it.
            drop(child);
        }
        if self.flood_stderr {
            std::thread::spawn(flood_stderr);
        }
        if let Some(rate) = self.stderr_rate.filter(|r| *r > 0) {
            std::thread::spawn(move || paced_stderr(rate));
        }
        if let Some(ms) = self.exit_after_ms {
            let code = self.exit_code;
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(ms));
                std::process::exit(code);
            });
        }
        if let Some(bytes) = self.huge_line {
            let mut stdout = std::io::stdout().lock();
            let line = vec![b'x'; bytes];
            stdout
                .write_all(&line)
                .and_then(|()| stdout.write_all(b"\n"))
                .and_then(|()| stdout.flush())
                .context("writing the --huge-line line")?;
        }
        if self.close_stdout {
            // SAFETY: closing fd 1 has no memory-safety preconditions; nothing in this process
            // writes to stdout afterwards (the server below never starts).
            unsafe {
                libc::close(libc::STDOUT_FILENO);
            }
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        if self.partial_json_then_die {
            let mut first = String::new();
            std::io::stdin()
                .lock()
                .read_line(&mut first)
                .context("reading the first request")?;
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(PARTIAL_JSON.as_bytes())
                .and_then(|()| stdout.flush())
                .context("writing the partial response")?;
            return Ok(Next::Exit(PARTIAL_JSON_EXIT));
        }
        if self.wrong_id {
            answer_with_wrong_ids().context("--wrong-id loop")?;
            return Ok(Next::Exit(0));
        }
        Ok(Next::Serve)
    }
}

/// Until stderr is closed: numbered lines, as fast as the reader takes them.
fn flood_stderr() {
    let mut stderr = std::io::stderr().lock();
    let mut n: u64 = 0;
    loop {
        n += 1;
        if writeln!(
            stderr,
            "flood {n}: the server is writing to stderr at full speed"
        )
        .is_err()
        {
            return;
        }
    }
}

/// Until stderr is closed: `stderr N` lines, `rate` a second, written every 10 ms in batches
/// that keep to the rate from the start (a late tick catches up).
fn paced_stderr(rate: u32) {
    let start = std::time::Instant::now();
    let mut stderr = std::io::stderr().lock();
    let mut n: u64 = 0;
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let due = (start.elapsed().as_secs_f64() * f64::from(rate)) as u64;
        while n < due {
            n += 1;
            if writeln!(stderr, "stderr {n}").is_err() {
                return;
            }
        }
        if stderr.flush().is_err() {
            return;
        }
    }
}

/// Answers every request on stdin with an empty result under a wrong id, until stdin closes.
fn answer_with_wrong_ids() -> std::io::Result<()> {
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lines() {
        let line = line?;
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(id), Some(_)) = (message.get("id"), message.get("method")) else {
            continue;
        };
        let reply = json!({"jsonrpc": "2.0", "id": wrong_id(id), "result": {}});
        writeln!(stdout, "{reply}")?;
        stdout.flush()?;
    }
    Ok(())
}

/// An id that is never `id`: the next number, or the string with a suffix.
pub fn wrong_id(id: &Value) -> Value {
    match id {
        Value::Number(n) => match n.as_i64() {
            Some(i) => json!(i.wrapping_add(1)),
            None => json!(format!("{n}-wrong")),
        },
        Value::String(s) => json!(format!("{s}-wrong")),
        other => json!(format!("{other}-wrong")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_ids_never_match() {
        for id in [
            json!(0),
            json!(41),
            json!("abc"),
            json!(i64::MAX),
            json!(1.5),
        ] {
            assert_ne!(wrong_id(&id), id);
        }
    }
}
