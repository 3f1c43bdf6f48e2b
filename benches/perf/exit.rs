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
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (one, many) = (ms(median(ones)), ms(median(manys)));
    vec![
        Row::new("exit", "run, 1 server: answer to exit", "ms", one),
        Row::new("exit", "run, 16 servers: answer to exit", "ms", many)
            .against("the same with 1 server", one)
            .at_most(1.5),
    ]
}
