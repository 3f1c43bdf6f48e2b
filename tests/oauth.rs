//! OAuth end to end over real sockets, against `demo-server --http --oauth` (an authorization
//! server and protected resource on loopback): `check --json` says `needs_login` with its hint;
//! `login` prints the authorization URL, which the test follows with plain HTTP (no browser)
//! to the loopback redirect listener; the server is then ready and a tool call works; the
//! token file is mode 0600; no token value reaches any output or the log; `logout` forgets it.
//! On a machine without a browser, the redirected URL is pasted into `login` instead.
//! A token that expires during a session is refreshed (ahead of its expiry, and on the 401 of
//! a server that does not say when it expires), and the next call works without a new login.

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use aimon_console::config::{ApprovalPolicy, PolicyConfig, ServerConfig, TransportKind};
use aimon_console::runtime::{AgentRuntimeFactory, CallStatus, RuntimeOptions, ServerStatus};
use common::*;

/// The token folder of this test binary's own process (the in-process runtime reads
/// `XDG_STATE_HOME`); set once, before any test reads it. Subprocesses get theirs explicitly.
fn process_state_home() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("aimon-oauth-tests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("state dir");
        std::env::set_var("XDG_STATE_HOME", &dir);
        dir
    })
}

/// `demo-server --http 127.0.0.1:0 --oauth FLAGS…`, its stderr (what its authorization server
/// did) going to `stderr`; returns it and its URL.
fn demo_oauth(flags: &[&str], stderr: &Path) -> (Background, String) {
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
struct Setup {
    config: TempConfig,
    state: PathBuf,
    log: PathBuf,
}

fn setup(url: &str) -> Setup {
    let config = write_config(&format!(
        "mcp:\n  servers:\n    - name: secure\n      transport: streamable_http\n      url: {url}\n"
    ));
    let state = config.dir.path().join("state");
    let log = config.dir.path().join("aimon.log");
    Setup { config, state, log }
}

impl Setup {
    fn command(&self, args: &[&str]) -> Command {
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

    fn run(&self, args: &[&str]) -> Output {
        self.command(args)
            .stdin(Stdio::null())
            .output()
            .expect("run aimon-console")
    }

    fn check_json(&self) -> (Output, Value) {
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
    fn login(&self) -> Output {
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
    fn token_file(&self) -> PathBuf {
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
fn follow(url: &str) {
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

fn wait_exit(child: &mut std::process::Child, timeout: Duration) -> std::process::ExitStatus {
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
fn post_form(url: &str, path: &str, form: &str) -> String {
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
fn tokens_in(file: &Path) -> Vec<String> {
    let record: Value =
        serde_json::from_slice(&std::fs::read(file).expect("token file")).expect("token JSON");
    let response = &record["credentials"]["token_response"];
    ["access_token", "refresh_token"]
        .iter()
        .filter_map(|k| response[k].as_str().map(str::to_string))
        .collect()
}

#[test]
fn login_end_to_end_needs_login_then_ready_with_no_token_shown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let demo_err = dir.path().join("demo.err");
    let (_demo, url) = demo_oauth(&[], &demo_err);
    let s = setup(&url);

    // 1. Before a login: needs_login, with its hint, in check --json and in the report.
    let (before_out, before) = s.check_json();
    assert_eq!(before_out.status.code(), Some(1), "{before:#}");
    let failure = &server(&before, "secure")["failure"];
    assert_eq!(failure["class"], "needs_login", "{before:#}");
    assert!(
        failure["hint"]
            .as_str()
            .is_some_and(|h| h.contains("aimon-console login")),
        "{failure:#}"
    );
    let human = s.run(&["check"]);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("needs_login") && text.contains("aimon-console login"),
        "{text}"
    );

    // 2. The login: the URL followed over plain HTTP to the loopback listener.
    let login = s.login();
    let printed = String::from_utf8_lossy(&login.stdout).into_owned();
    assert!(
        login.status.success(),
        "login failed: {printed}\n{}",
        String::from_utf8_lossy(&login.stderr)
    );
    assert!(printed.contains("code_challenge_method=S256"), "{printed}");
    assert!(printed.contains("resource="), "{printed}");
    assert!(printed.contains("logged in to secure"), "{printed}");
    let file = s.token_file();
    let mode = std::fs::metadata(&file)
        .expect("token file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{}", file.display());
    let tokens = tokens_in(&file);
    assert_eq!(tokens.len(), 2, "an access and a refresh token");

    // 3. Ready, and a tool call works.
    let (after_out, after) = s.check_json();
    assert_eq!(after_out.status.code(), Some(0), "{after:#}");
    assert_eq!(server(&after, "secure")["status"], "ready");
    assert_eq!(server(&after, "secure")["tools"], 5);
    let call = s.run(&[
        "call",
        "mcp__secure__echo",
        "--args",
        r#"{"text":"through oauth"}"#,
        "--yes",
        "--json",
    ]);
    let outcome: Value = serde_json::from_slice(&call.stdout).expect("call JSON");
    assert_eq!(outcome["status"], "ok", "{outcome:#}");
    assert!(outcome["result"]["text"]
        .as_str()
        .is_some_and(|t| t.contains("through oauth")));

    // 4. No token value in any output, nor in the log (written at debug level).
    let log = std::fs::read_to_string(&s.log).expect("log file");
    assert!(!log.is_empty());
    for token in &tokens {
        for (what, bytes) in [
            ("check --json before", &before_out.stdout),
            ("check before (stderr)", &before_out.stderr),
            ("check", &human.stdout),
            ("login stdout", &login.stdout),
            ("login stderr", &login.stderr),
            ("check --json after", &after_out.stdout),
            ("call stdout", &call.stdout),
            ("call stderr", &call.stderr),
        ] {
            assert!(
                !String::from_utf8_lossy(bytes).contains(token.as_str()),
                "a token is in {what}"
            );
        }
        assert!(!log.contains(token.as_str()), "a token is in the log file");
    }
    let demo_log = std::fs::read_to_string(&demo_err).expect("demo stderr");
    assert!(demo_log.contains("authorization granted"), "{demo_log}");

    // 5. Logout gives the tokens back (RFC 7009) and forgets them: needs_login again, and the
    // old refresh token no longer gets a token.
    let refresh = tokens_in(&file)
        .into_iter()
        .find(|t| t.starts_with("demo-rt"))
        .expect("a refresh token was stored");
    let out = s.run(&["logout", "secure"]);
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("logged out of secure"), "{said}");
    assert!(
        said.contains("the authorization server revoked them"),
        "{said}"
    );
    assert!(!file.exists());
    let demo_log = std::fs::read_to_string(&demo_err).expect("demo stderr");
    assert!(
        demo_log.contains("oauth: revoked a refresh token (refresh_token)"),
        "{demo_log}"
    );
    assert!(
        demo_log.contains("oauth: revoked an access token (access_token)"),
        "{demo_log}"
    );
    let status = post_form(
        &url,
        "/token",
        &format!("grant_type=refresh_token&refresh_token={refresh}&client_id=x"),
    );
    assert!(status.starts_with("HTTP/1.1 400"), "{status}");
    let (_, again) = s.check_json();
    assert_eq!(server(&again, "secure")["failure"]["class"], "needs_login");
}

#[test]
fn logout_forgets_the_login_even_when_the_server_is_gone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (demo, url) = demo_oauth(&[], &dir.path().join("demo.err"));
    let s = setup(&url);
    let login = s.login();
    assert!(login.status.success());
    let file = s.token_file();
    assert!(file.exists());
    // The authorization server is gone: nothing revokes the tokens there, but the login here
    // is forgotten all the same, and the operator is told so.
    drop(demo);
    let out = s.run(&["logout", "secure"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("not revoked at the server: the revocation endpoint could not be reached"),
        "{said}"
    );
    assert!(!file.exists());
    for token in ["demo-at", "demo-rt"] {
        assert!(!said.contains(token), "{said}");
    }
}

#[test]
fn login_refuses_what_it_cannot_log_in_to() {
    let s = setup("http://127.0.0.1:9/mcp");
    let out = s.run(&["login", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no server named \"nope\""));
    let cfg = write_config(
        "mcp:\n  servers:\n    - name: keyed\n      transport: streamable_http\n      url: http://127.0.0.1:9/mcp\n      bearer_token: t\n",
    );
    let out = run(&["login", "keyed"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("sends its own credentials"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Logs in to `url` through the `login` command with the token folder of this process.
fn login_for_this_process(url: &str) -> Setup {
    let mut s = setup(url);
    s.state = process_state_home().to_path_buf();
    let out = s.login();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    s
}

/// Two calls in one runtime, the access token expiring between them: both work, and the demo
/// authorization server saw one authorization and at least one refresh.
async fn a_session_outlives_its_token(flags: &[&str]) {
    process_state_home();
    let dir = tempfile::tempdir().expect("tempdir");
    let demo_err = dir.path().join("demo.err");
    let (_demo, url) = demo_oauth(flags, &demo_err);
    let login_url = url.clone();
    let _login = tokio::task::spawn_blocking(move || login_for_this_process(&login_url))
        .await
        .expect("login");
    let mut server = ServerConfig::remote("secure", TransportKind::StreamableHttp, &url);
    server.request_timeout = Duration::from_secs(10);
    let config = config_of(
        vec![server],
        PolicyConfig {
            approval: ApprovalPolicy::Never,
            ..PolicyConfig::default()
        },
    );
    let (events, mut stream) = AgentRuntimeFactory::events();
    tokio::spawn(async move { while stream.recv().await.is_some() {} });
    let runtime = AgentRuntimeFactory::create(
        &config,
        RuntimeOptions {
            local_tools: false,
            ..RuntimeOptions::default()
        },
        events,
    )
    .await
    .expect("runtime");
    let report = runtime.wait_started().await.servers[0].clone();
    assert_eq!(report.status, ServerStatus::Ready, "{report:#?}");
    let call = |text: &'static str| {
        runtime.call(
            "mcp__secure__echo",
            json!({ "text": text }),
            tokio_util::sync::CancellationToken::new(),
        )
    };
    let first = call("before").await;
    assert_eq!(first.status, CallStatus::Ok, "{first:?}");
    // The token lives 2 s: wait it out.
    tokio::time::sleep(Duration::from_millis(3_000)).await;
    let second = call("after").await;
    assert_eq!(second.status, CallStatus::Ok, "{second:?}");
    assert!(second.result.text.contains("after"), "{second:?}");
    runtime.close().await;
    let demo_log = std::fs::read_to_string(&demo_err).expect("demo stderr");
    assert_eq!(
        demo_log.matches("authorization granted").count(),
        1,
        "a second login happened:\n{demo_log}"
    );
    assert!(
        demo_log.contains("token refreshed"),
        "no refresh:\n{demo_log}"
    );
}

#[tokio::test]
async fn an_expiring_token_is_refreshed_before_the_next_call() {
    a_session_outlives_its_token(&["--oauth-token-ttl", "2"]).await;
}

#[tokio::test]
async fn a_token_refused_as_expired_is_refreshed_on_the_401() {
    // No `expires_in`: the client learns of the expiry from the server's 401 alone.
    a_session_outlives_its_token(&["--oauth-token-ttl", "2", "--oauth-hide-expiry"]).await;
}

/// The redirect's target, not followed: what a browser on another machine would end up at.
fn redirect_target(url: &str) -> String {
    let url = url.to_string();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let _ = rustls::crypto::ring::default_provider().install_default();
            let client = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client");
            let response = client.get(&url).send().await.expect("GET");
            assert_eq!(response.status(), 302);
            response
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .expect("a Location")
                .to_string()
        })
    })
    .join()
    .expect("the browser thread")
}

#[test]
fn on_a_remote_shell_the_redirected_url_is_pasted() {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("tempdir");
    let (_demo, url) = demo_oauth(&[], &dir.path().join("demo.err"));
    let s = setup(&url);
    let mut child = s
        .command(&["login", "secure", "--no-browser"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("login");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let page = loop {
        let line = lines
            .next()
            .expect("an authorization URL before the end")
            .expect("a line");
        if let (Some(at), true) = (line.find("http://"), line.contains("/authorize?")) {
            break line[at..].trim().to_string();
        }
    };
    // The browser "elsewhere" never reaches the listener; its address bar is pasted instead,
    // after a line that is not it.
    let target = redirect_target(&page);
    writeln!(stdin, "not the url").expect("write");
    writeln!(stdin, "{target}").expect("write");
    let status = wait_exit(&mut child, Duration::from_secs(30));
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(status.success(), "{rest:#?}");
    assert!(
        rest.iter().any(|l| l.contains("logged in to secure")),
        "{rest:#?}"
    );
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
    }
    assert!(
        stderr.contains("that is not the redirected URL"),
        "{stderr}"
    );
    let (_, after) = s.check_json();
    assert_eq!(server(&after, "secure")["status"], "ready", "{after:#}");
}
