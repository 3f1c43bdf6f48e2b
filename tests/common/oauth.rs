//! OAuth test helpers: `demo-server --http --oauth`, a config with one server `secure` at its
//! URL, `login` with the authorization URL followed over plain HTTP, the token file.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::*;

/// `demo-server --http 127.0.0.1:0 --oauth FLAGS…`, its stderr (what its authorization server
/// did) going to `stderr`; returns it and its URL.
pub fn demo_oauth(flags: &[&str], stderr: &Path) -> (Background, String) {
    let child = Command::new(bin())
        .args(["demo-server", "--http", "127.0.0.1:0", "--oauth"])
        .args(flags)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(stderr).expect("stderr file"))
        .spawn()
        .expect("demo-server --http --oauth");
    listening(child)
}

/// A temp folder with a config holding one streamable_http server `secure` at `url`, a token
/// folder and a log file.
pub struct Setup {
    pub config: TempConfig,
    pub state: PathBuf,
    pub log: PathBuf,
}

pub fn setup(url: &str) -> Setup {
    let config = write_config(&format!(
        "mcp:\n  servers:\n    - name: secure\n      transport: streamable_http\n      url: {url}\n"
    ));
    let state = config.dir.path().join("state");
    let log = config.dir.path().join("aimon.log");
    Setup { config, state, log }
}

impl Setup {
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin());
        cmd.arg("--config")
            .arg(&self.config.path)
            .arg("--log-file")
            .arg(&self.log)
            .args(args)
            .env("XDG_STATE_HOME", &self.state)
            .env("AIMON_LOG", "debug")
            .env("NO_COLOR", "1");
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args)
            .stdin(Stdio::null())
            .output()
            .expect("run aimon-console")
    }

    pub fn check_json(&self) -> (Output, Value) {
        let out = self.run(&["check", "--json"]);
        let value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "no JSON ({e}): {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out, value)
    }

    /// `login secure --no-browser`, its URL followed with plain HTTP. Returns its output.
    pub fn login(&self) -> Output {
        let mut child = self
            .command(&["login", "secure", "--no-browser"])
            // Kept open: a closed stdin must not end the wait for the redirect.
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("login");
        let stdout = child.stdout.take().expect("stdout");
        let (lines_tx, lines_rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = lines_tx.send(line);
            }
        });
        let mut printed = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        let url = loop {
            let line = lines_rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("no authorization URL; printed: {printed:#?}"));
            printed.push(line.clone());
            if let Some(at) = line.find("http://") {
                if line.contains("/authorize?") {
                    break line[at..].trim().to_string();
                }
            }
        };
        follow(&url);
        let status = wait_exit(&mut child, Duration::from_secs(30));
        drop(child.stdin.take());
        let _ = reader.join();
        printed.extend(lines_rx.try_iter());
        let mut stderr = Vec::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_end(&mut e, &mut stderr);
        }
        Output {
            status,
            stdout: printed.join("\n").into_bytes(),
            stderr,
        }
    }

    /// The token file of the one server.
    pub fn token_file(&self) -> PathBuf {
        let dir = self.state.join("aimon-console/oauth");
        let files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        files[0].clone()
    }
}

/// GETs `url` following redirects, as a browser whose user is signed in: the authorization
/// server redirects to the login's loopback listener.
pub fn follow(url: &str) {
    // A thread of its own: callers may be inside an async test.
    let url = url.to_string();
    let status = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let _ = rustls::crypto::ring::default_provider().install_default();
            let response = reqwest::Client::new().get(&url).send().await.expect("GET");
            response.status()
        })
    })
    .join()
    .expect("the browser thread");
    assert!(
        status.is_success(),
        "the redirect listener answered {status}"
    );
}

pub fn wait_exit(child: &mut std::process::Child, timeout: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            panic!("login did not finish in {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// POSTs `form` to `path` on the host of `url` over plain HTTP/1.1; the status line answered.
pub fn post_form(url: &str, path: &str, form: &str) -> String {
    use std::io::{BufRead, BufReader, Write};
    let host = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("host");
    let mut stream = std::net::TcpStream::connect(host).expect("connect");
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{form}",
        form.len()
    )
    .expect("write");
    let mut status = String::new();
    BufReader::new(stream).read_line(&mut status).expect("read");
    status
}

/// The access and refresh tokens in a token file.
pub fn tokens_in(file: &Path) -> Vec<String> {
    let record: Value =
        serde_json::from_slice(&std::fs::read(file).expect("token file")).expect("token JSON");
    let response = &record["credentials"]["token_response"];
    ["access_token", "refresh_token"]
        .iter()
        .filter_map(|k| response[k].as_str().map(str::to_string))
        .collect()
}
