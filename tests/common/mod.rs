//! Shared helpers for the integration tests: the real binary, temporary configs, process scans.
#![allow(dead_code)]

pub mod daemon;
pub mod oauth;
pub mod peer;
pub mod tmux;

pub use peer::Peer;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The aimon-console binary built for this test run.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_aimon-console")
}

/// `name` in the folder for the test binaries' files that outlive a test (logs, a process's
/// state): `target/tmp/tests` (cargo's `CARGO_TARGET_TMPDIR`), so a run leaves nothing in the
/// machine's temp folder and `cargo clean` takes them.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tests");
    std::fs::create_dir_all(&dir).expect("the tests' scratch folder");
    dir.join(name)
}

/// The state folder (`XDG_STATE_HOME`) of this test binary's own process, where an in-process
/// runtime keeps tokens and tool lists; set once, before any test reads it (subprocesses inherit
/// it, or get their own explicitly).
pub fn process_state_home(name: &str) -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch(&format!("{name}-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("state dir");
        std::env::set_var("XDG_STATE_HOME", &dir);
        dir
    })
}

/// A unique marker for the processes of one test (put in a server's env, found in /proc).
pub fn marker(name: &str) -> String {
    format!("aimon-test-{name}-{}-{}", std::process::id(), rand_suffix())
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// A temp dir holding `aimon.yaml` with `yaml` in it.
pub struct TempConfig {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

pub fn write_config(yaml: &str) -> TempConfig {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("aimon.yaml");
    std::fs::write(&path, yaml).expect("write config");
    TempConfig { dir, path }
}

/// One demo server entry (YAML list item) with the given flags and options.
pub fn demo_server(name: &str, flags: &[&str], extra: &str, marker: &str) -> String {
    let args: Vec<String> = std::iter::once("demo-server".to_string())
        .chain(flags.iter().map(|f| format!("{f:?}")))
        .collect();
    let mut s = format!(
        "    - name: {name}\n      command: {}\n      args: [{}]\n      env: {{AIMON_TEST_MARKER: {marker}}}\n",
        bin(),
        args.join(", ")
    );
    for line in extra.lines().filter(|l| !l.trim().is_empty()) {
        s.push_str(&format!("      {}\n", line.trim()));
    }
    s
}

/// The log file of the binary's runs in this test process.
pub fn run_log() -> PathBuf {
    scratch(&format!("run-{}.log", std::process::id()))
}

/// Runs the binary with `args`, stdin closed, logging to [`run_log`].
pub fn run(args: &[&str], config: Option<&Path>) -> Output {
    let mut cmd = Command::new(bin());
    if let Some(c) = config {
        cmd.arg("--config").arg(c);
    }
    cmd.arg("--log-file").arg(run_log());
    cmd.args(args)
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .output()
        .expect("run aimon-console")
}

/// `check --json` on a config: (exit code, parsed JSON).
pub fn check_json(config: &Path) -> (i32, Value) {
    let out = run(&["check", "--json"], Some(config));
    let text = String::from_utf8_lossy(&out.stdout);
    let value: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "check --json printed no JSON ({e}):\nstdout: {text}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), value)
}

/// The `servers[]` entry named `name`.
pub fn server<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["servers"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no server {name} in {report:#}"))
}

/// The `tools[]` entry named `name`.
pub fn tool<'a>(list: &'a Value, name: &str) -> &'a Value {
    list.as_array()
        .and_then(|a| a.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("no tool {name} in {list:#}"))
}

/// Pids of live processes whose environment holds `marker` (zombies excluded).
pub fn processes_with(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        {
            continue;
        }
        if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) {
            if env
                .split(|b| *b == 0)
                .any(|kv| kv == format!("AIMON_TEST_MARKER={marker}").as_bytes())
            {
                found.push(pid);
            }
        }
    }
    found
}

/// Waits up to `timeout` for every process with `marker` to be gone; returns the survivors.
pub fn wait_gone(marker: &str, timeout: Duration) -> Vec<i32> {
    let start = Instant::now();
    loop {
        let left = processes_with(marker);
        if left.is_empty() || start.elapsed() > timeout {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A stdio demo-server entry built in code (for tests that drive the library directly), its
/// processes marked with `marker`.
pub fn demo_config(
    name: &str,
    flags: &[&str],
    trust: aimon_console::config::AnnotationTrust,
    marker: &str,
) -> aimon_console::config::ServerConfig {
    let args = std::iter::once("demo-server")
        .chain(flags.iter().copied())
        .map(String::from)
        .collect();
    let mut server = aimon_console::config::ServerConfig::stdio(name, bin(), args);
    server.env.insert("AIMON_TEST_MARKER".into(), marker.into());
    server.annotation_trust = trust;
    server
}

/// A config holding `servers` under `policy`, as if loaded from nowhere.
pub fn config_of(
    servers: Vec<aimon_console::config::ServerConfig>,
    policy: aimon_console::config::PolicyConfig,
) -> aimon_console::config::Config {
    aimon_console::config::Config::from_servers(servers, policy)
}

/// A background server process, stopped when dropped: SIGTERM, as an operator or systemd stops
/// it, then SIGKILL if it has not exited within `STOP_GRACE`. (SIGKILL alone left a daemon's
/// model endpoint running after each test: an HTTP server on a null stdin outlives a killed
/// daemon until the next daemon on that socket ends it.)
pub struct Background(pub Child);

const STOP_GRACE: Duration = Duration::from_secs(5);

impl Drop for Background {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            // SAFETY: kill has no memory effects; the pid is our child's, not yet reaped.
            unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
            let start = Instant::now();
            while matches!(self.0.try_wait(), Ok(None)) && start.elapsed() < STOP_GRACE {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `demo-server --http 127.0.0.1:0 FLAGS…`; returns it and its URL.
pub fn demo_http(flags: &[&str]) -> (Background, String) {
    demo_http_at("127.0.0.1:0", flags, None)
}

/// `demo-server --http ADDR FLAGS…`, marked with `marker` if given; returns it and its URL (read
/// from its first line, so it is listening on return).
pub fn demo_http_at(addr: &str, flags: &[&str], marker: Option<&str>) -> (Background, String) {
    let mut cmd = Command::new(bin());
    cmd.args(["demo-server", "--http", addr])
        .args(flags)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(marker) = marker {
        cmd.env("AIMON_TEST_MARKER", marker);
    }
    listening(cmd.spawn().expect("start demo-server --http"))
}

/// A loopback port nothing listens on (bound, then released).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// `demo-model FLAGS…` on a free loopback port; returns it and its base URL (`…/v1`, read from
/// its first line, so it is listening on return).
pub fn demo_model(flags: &[&str]) -> (Background, String) {
    let child = Command::new(bin())
        .arg("demo-model")
        .args(flags)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start demo-model");
    listening(child)
}

/// A child that says `listening on URL` first on its piped stdout (the demo model, the demo
/// server over HTTP): it and the URL, once it is listening.
pub fn listening(mut child: Child) -> (Background, String) {
    let stdout = child.stdout.take().expect("stdout");
    let guard = Background(child);
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read the listening line");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    (guard, url)
}

/// llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`) with `model` on a
/// free port, with `args` besides; returns it and its base URL once `/v1/models` answers 200
/// (loading the model takes a few seconds; 120 s at most).
pub fn llama_server(python: &Path, model: &Path, args: &[&str]) -> (Peer, String) {
    let port = free_port();
    let mut server = Peer::spawn(
        "llama_cpp.server",
        Command::new(python)
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(model)
            .args(args)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()]),
    );
    let url = format!("http://127.0.0.1:{port}/v1");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(death) = server.death() {
            panic!("llama_cpp.server did not come up: {death}");
        }
        if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            use std::io::{Read, Write};
            let _ = stream.write_all(b"GET /v1/models HTTP/1.0\r\nHost: x\r\n\r\n");
            let mut answer = String::new();
            let _ = stream.read_to_string(&mut answer);
            if answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200") {
                return (server, url);
            }
        }
        assert!(
            Instant::now() < deadline,
            "llama_cpp.server did not come up in 120 s"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// LiteLLM's proxy (`litellm`, with `config`) in front of the llama server at `llama_url`, on a
/// free port, offline (`LITELLM_LOCAL_MODEL_COST_MAP`: no fetch of its cost map); returns it and
/// its base URL (`…/v1`) once `/health/liveliness` answers 200.
pub fn litellm_server(litellm: &Path, config: &Path, llama_url: &str) -> (Peer, String) {
    let port = free_port();
    let mut server = Peer::spawn(
        "litellm",
        Command::new(litellm)
            .arg("--config")
            .arg(config)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .env("LLAMA_API_BASE", llama_url)
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .env("PYTHONDONTWRITEBYTECODE", "1"),
    );
    let url = format!("http://127.0.0.1:{port}/v1");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(death) = server.death() {
            panic!("litellm did not come up: {death}");
        }
        if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            use std::io::{Read, Write};
            let _ = stream.write_all(b"GET /health/liveliness HTTP/1.0\r\nHost: x\r\n\r\n");
            let mut answer = String::new();
            let _ = stream.read_to_string(&mut answer);
            if answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200") {
                return (server, url);
            }
        }
        assert!(Instant::now() < deadline, "litellm did not come up in 60 s");
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Starts `cmd`'s process with SIGINT, SIGQUIT, SIGTERM and SIGHUP at their defaults, as a
/// terminal's foreground job has them, whatever the test runner inherited: a script's
/// background job (`cargo test &`) inherits SIGINT ignored, and aimon-console keeps a signal
/// it inherited as ignored, so a test that sends one would wait in vain.
pub fn default_signals(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            for signal in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(signal, libc::SIG_DFL);
            }
            Ok(())
        })
    }
}

/// The stdout of a command that prints JSON, parsed (a panic naming both streams if it is not).
pub fn stdout_json(out: &std::process::Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {text}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Stdout as JSON lines (`run --json`, `watch --json`), one value a line.
pub fn stdout_lines(out: &std::process::Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// The events of `kind` among `run --json`'s lines.
pub fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// The records of session `id`'s transcript under the state dir `state`.
pub fn session_records(state: &Path, id: &str) -> Vec<Value> {
    std::fs::read_to_string(state.join(format!("aimon-console/sessions/{id}.jsonl")))
        .expect("transcript")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// The index of the first event of `kind` in `events` for which `test` holds.
pub fn find_event(events: &[Value], kind: &str, test: impl Fn(&Value) -> bool) -> usize {
    events
        .iter()
        .position(|e| e["type"] == kind && test(e))
        .unwrap_or_else(|| panic!("no {kind} event in {events:#?}"))
}

/// Runs the binary on `config` with `args`, its state (transcripts, kept lists, the log) in
/// `state`, `env` added, and `stdin` written to it (closed when `None`).
pub fn run_in_state(
    state: &Path,
    config: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    stdin: Option<&str>,
) -> Output {
    use std::io::Write;
    let mut cmd = Command::new(bin());
    cmd.arg("--config")
        .arg(config)
        .arg("--log-file")
        .arg(state.join("aimon.log"))
        .args(args)
        .env("XDG_STATE_HOME", state)
        .env("NO_COLOR", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("run aimon-console");
    if let (Some(text), Some(mut input)) = (stdin, child.stdin.take()) {
        input.write_all(text.as_bytes()).expect("stdin");
    }
    child.wait_with_output().expect("its output")
}
