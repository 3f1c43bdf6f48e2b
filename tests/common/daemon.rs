//! A daemon of the tests and consoles of its operator API (docs/daemon.md): tests/daemon.rs
//! and tests/daemon_agent.rs.
#![allow(dead_code)] // each test binary uses some of it

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use super::{bin, listening, Background, TempConfig};

/// A daemon on `config`, its socket in a fresh 0700 folder.
pub fn daemon(config: &TempConfig) -> (Background, PathBuf) {
    daemon_with(config, &[])
}

/// [`daemon`] with `env` added.
pub fn daemon_with(config: &TempConfig, env: &[(&str, &Path)]) -> (Background, PathBuf) {
    let dir = config.path.parent().unwrap().join("run");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    daemon_at(config, &dir.join("daemon.sock"), env)
}

/// A daemon on `config` at `socket` (its folder there already: a killed daemon's, say), its
/// state (transcripts, tokens) in that folder too.
pub fn daemon_at(
    config: &TempConfig,
    socket: &Path,
    env: &[(&str, &Path)],
) -> (Background, PathBuf) {
    let dir = socket.parent().unwrap();
    let socket = socket.to_path_buf();
    let child = Command::new(bin())
        .arg("--config")
        .arg(&config.path)
        .arg("--log-file")
        .arg(dir.join("daemon.log"))
        .arg("daemon")
        .arg("--socket")
        .arg(&socket)
        .env("XDG_STATE_HOME", dir)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the daemon");
    let (child, said) = listening(child);
    assert_eq!(said, socket.display().to_string());
    (child, socket)
}

/// A daemon whose one server is the demo server `notes` (its `flags`, trusted), and a console
/// of its API named `name`, initialized once `notes` is ready. Keep the config and the daemon
/// for as long as the test runs.
pub fn notes_daemon(
    test: &str,
    flags: &[&str],
    name: &str,
) -> (TempConfig, Background, PathBuf, Console) {
    let mark = super::marker(test);
    let config = super::write_config(&format!(
        "mcp:\n  servers:\n{}",
        super::demo_server("notes", flags, "annotation_trust: trust", &mark)
    ));
    let (daemon, socket) = daemon(&config);
    let mut console = Console::connect(&socket);
    console.initialize(name);
    console.ready("notes");
    (config, daemon, socket, console)
}

/// A console of the operator API: lines out, lines in.
pub struct Console {
    pub out: UnixStream,
    pub lines: BufReader<UnixStream>,
    next_id: u64,
}

impl Console {
    pub fn connect(socket: &Path) -> Console {
        let out = UnixStream::connect(socket).expect("connect");
        out.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let lines = BufReader::new(out.try_clone().unwrap());
        Console {
            out,
            lines,
            next_id: 1,
        }
    }

    /// Sends a request; returns its id.
    pub fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.out, "{line}").unwrap();
        id
    }

    pub fn read(&mut self) -> Value {
        let mut line = String::new();
        let n = self
            .lines
            .read_line(&mut line)
            .expect("a line from the daemon");
        assert!(n > 0, "the daemon closed the connection");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Reads until a message `test` takes; returns it.
    pub fn until(&mut self, what: &str, test: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..100_000 {
            let message = self.read();
            if test(&message) {
                return message;
            }
        }
        panic!("no {what}");
    }

    /// The answer to request `id` (what comes before it is skipped).
    pub fn answer(&mut self, id: u64) -> Value {
        self.until("answer", |m| m["id"] == id)
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.answer(id)
    }

    pub fn initialize(&mut self, name: &str) -> Value {
        let client = json!({"name": name, "user": "tester", "host": "here"});
        let answer = self.call(
            "initialize",
            json!({"protocol_version": 1, "client": client}),
        );
        assert!(answer.get("error").is_none(), "{answer}");
        answer["result"].clone()
    }

    /// Waits until server `name` is ready (it may have been before this console attached).
    pub fn ready(&mut self, name: &str) {
        let servers = self.call("servers", json!({}));
        let ready = servers["result"]["servers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == name && s["status"] == "ready");
        if !ready {
            self.until("its start", |m| {
                m["params"]["type"] == "server_started" && m["params"]["server"] == name
            });
        }
    }
}

pub fn is_event(message: &Value, kind: &str) -> bool {
    message["method"] == "event" && message["params"]["type"] == kind
}

/// A daemon on a config of `yaml` that also listens on TCP with TLS (a certificate for
/// 127.0.0.1 made with openssl under `dir`): it, its state folder (beside its socket), the
/// port and the certificate.
pub fn daemon_over_tls(dir: &Path, yaml: &str) -> (Background, PathBuf, u16, PathBuf) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:P-256", "-nodes", "-days", "1"])
        .args([
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ])
        // A leaf, not a CA: rustls takes a self-signed certificate as its own root only so.
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl (.ci/run installs it)");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let config = dir.join("aimon.yaml");
    let yaml = format!(
        "{yaml}daemon:\n  listen: 127.0.0.1:0\n  tls_cert: {}\n  tls_key: {}\n",
        cert.display(),
        key.display()
    );
    std::fs::write(&config, yaml).unwrap();
    let run = dir.join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket = run.join("daemon.sock");
    let mut child = Command::new(bin())
        .arg("--config")
        .arg(&config)
        .arg("--log-file")
        .arg(run.join("daemon.log"))
        .args(["daemon", "--socket"])
        .arg(&socket)
        .env("XDG_STATE_HOME", &run)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the daemon");
    let mut said = BufReader::new(child.stdout.take().unwrap());
    let daemon = Background(child);
    let mut line = String::new();
    said.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), format!("listening on {}", socket.display()));
    line.clear();
    said.read_line(&mut line).unwrap();
    let port = line
        .trim()
        .strip_prefix("listening on tls://127.0.0.1:")
        .unwrap_or_else(|| panic!("{line}"))
        .parse()
        .unwrap();
    (daemon, run, port, cert)
}

/// A config of the demo server `notes`, its annotations trusted, and `more` after it.
pub fn notes_config(more: &str) -> TempConfig {
    let bin = bin();
    super::write_config(&format!(
        "mcp:
  servers:
    - name: notes
      command: {bin}
      args: [demo-server]
      annotation_trust: trust
{more}"
    ))
}

/// A config of the demo server `notes` (trusted) and the demo model preferring it, for the
/// daemon's agent.
pub fn agent_config() -> TempConfig {
    let bin = bin();
    notes_config(&format!(
        "agent:
  models:
    demo:
      command: {bin}
      args: [demo-model, --prefer-server, notes]
      model: demo
      request_timeout: 10s
"
    ))
}
