//! From the answer to the process's exit: `run` with 1 and with 16 demo servers, the answer
//! being the last event line before the outcome. What closing takes after the work is done
//! (the servers asked to end, their trees walked for escaped descendants, zombies reaped)
//! should hardly grow with the number of servers.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::report::Row;

/// A config of `servers` demo servers and the demo model.
fn config(dir: &Path, binary: &str, servers: usize) -> std::path::PathBuf {
    let mut yaml = String::from("mcp:\n  servers:\n");
    for i in 0..servers {
        yaml.push_str(&format!(
            "    - name: s{i}\n      command: {binary:?}\n      args: [demo-server]\n"
        ));
    }
    yaml.push_str(&format!(
        "agent:\n  default: demo\n  models:\n    demo:\n      command: {binary:?}\n      args: [demo-model]\n      model: demo\n"
    ));
    let path = dir.join(format!("exit-{servers}.yaml"));
    if let Err(e) = std::fs::write(&path, yaml) {
        panic!("cannot write {}: {e}", path.display());
    }
    path
}

/// One `run`: the time from its answer line to its exit.
fn answer_to_exit(binary: &str, config: &Path, state: &Path) -> Duration {
    let mut child = match Command::new(binary)
        .arg("--config")
        .arg(config)
        .args(["run", "hello", "--json"])
        .env("XDG_STATE_HOME", state)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => panic!("cannot run {binary}: {e}"),
    };
    let Some(stdout) = child.stdout.take() else {
        panic!("no stdout");
    };
    let mut answered = None;
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        if line.contains("\"type\":\"answer\"") {
            answered = Some(Instant::now());
        }
    }
    let status = child.wait();
    let exited = Instant::now();
    match (answered, status) {
        (Some(at), Ok(s)) if s.success() => exited.duration_since(at),
        (answered, status) => panic!("run did not answer and exit: {answered:?} {status:?}"),
    }
}

/// `servers` demo servers, each past its handshake, their stdin closed at once by this
/// process (no console): the time until every one has exited. What the servers' own close and
/// exit take on this machine, the part of closing no console can shorten.
fn servers_alone(binary: &str, servers: usize) -> Duration {
    use std::io::Write;
    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
    let mut children: Vec<_> = (0..servers)
        .map(|_| {
            match Command::new(binary)
                .arg("demo-server")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
            {
                Ok(c) => c,
                Err(e) => panic!("cannot run {binary} demo-server: {e}"),
            }
        })
        .collect();
    for child in &mut children {
        let (Some(stdin), Some(stdout)) = (child.stdin.as_mut(), child.stdout.take()) else {
            panic!("no pipes");
        };
        if let Err(e) = writeln!(stdin, "{INITIALIZE}") {
            panic!("demo-server: {e}");
        }
        let mut line = String::new();
        if BufReader::new(stdout).read_line(&mut line).is_err() || line.is_empty() {
            panic!("demo-server did not answer its handshake");
        }
    }
    std::thread::sleep(Duration::from_millis(50));
    let started = Instant::now();
    for child in &mut children {
        drop(child.stdin.take());
    }
    for child in &mut children {
        if let Err(e) = child.wait() {
            panic!("demo-server: {e}");
        }
    }
    started.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// `reps` runs with 1 server and with 16, interleaved; the row holds 16 against 1.
pub fn rows(binary: &str, dir: &Path, reps: usize) -> Vec<Row> {
    let one = config(dir, binary, 1);
    let many = config(dir, binary, 16);
    let state = dir.join("exit-state");
    let (mut ones, mut manys) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        ones.push(answer_to_exit(binary, &one, &state));
        manys.push(answer_to_exit(binary, &many, &state));
    }
    let (mut alone_ones, mut alone_manys) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        alone_ones.push(servers_alone(binary, 1));
        alone_manys.push(servers_alone(binary, 16));
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (one, many) = (ms(median(ones)), ms(median(manys)));
    let (alone_one, alone_many) = (ms(median(alone_ones)), ms(median(alone_manys)));
    vec![
        Row::new("exit", "run, 1 server: answer to exit", "ms", one),
        Row::new("exit", "run, 16 servers: answer to exit", "ms", many)
            .against("the same with 1 server", one)
            .at_most(1.5),
        Row::new(
            "exit",
            "16 servers alone: stdin closed to all exited",
            "ms",
            alone_many,
        )
        .against("1 server alone, the same", alone_one),
        Row::new("exit", "run, 16 servers: answer to exit", "ms", many)
            .against("16 servers alone: stdin closed to all exited", alone_many),
    ]
}
