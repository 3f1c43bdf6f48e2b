//! OAuth end to end over real sockets, against `demo-server --http --oauth` (an authorization
//! server and protected resource on loopback): `check --json` says `needs_login` with its hint;
//! `login` prints the authorization URL, which the test follows with plain HTTP (no browser)
//! to the loopback redirect listener; the server is then ready and a tool call works; the
//! token file is mode 0600; no token value reaches any output or the log; `logout` forgets it.
//! On a machine without a browser, the redirected URL is pasted into `login` instead.
//! A token that expires during a session is refreshed (ahead of its expiry, and on the 401 of
//! a server that does not say when it expires), and the next call works without a new login.
//! Against `--oauth-dpop --oauth-dpop-nonce` the tokens are DPoP-bound (RFC 9449): the login,
//! the calls and the refresh each prove the key, after answering both servers' nonces.

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};

use aimon_console::config::{ApprovalPolicy, PolicyConfig, ServerConfig, TransportKind};
use aimon_console::runtime::{AgentRuntimeFactory, CallStatus, RuntimeOptions, ServerStatus};
use common::oauth::*;
use common::*;

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
    s.state = process_state_home("oauth").to_path_buf();
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
    process_state_home("oauth");
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
async fn a_dpop_bound_token_is_refreshed_with_a_proof() {
    a_session_outlives_its_token(&[
        "--oauth-token-ttl",
        "2",
        "--oauth-dpop",
        "--oauth-dpop-nonce",
    ])
    .await;
}

#[test]
fn a_dpop_login_binds_the_token_and_every_call_proves_the_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let demo_err = dir.path().join("demo.err");
    let (_demo, url) = demo_oauth(&["--oauth-dpop", "--oauth-dpop-nonce"], &demo_err);
    let s = setup(&url);
    let (_, before) = s.check_json();
    assert_eq!(
        server(&before, "secure")["failure"]["class"],
        "needs_login",
        "{before:#}"
    );
    let login = s.login();
    assert!(
        login.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&login.stdout),
        String::from_utf8_lossy(&login.stderr)
    );
    let record: Value =
        serde_json::from_slice(&std::fs::read(s.token_file()).expect("token file")).expect("JSON");
    // oauth2 keeps a token type it does not know in lower case.
    let token_type = record["credentials"]["token_response"]["token_type"].as_str();
    assert!(
        token_type.is_some_and(|t| t.eq_ignore_ascii_case("dpop")),
        "{token_type:?}"
    );
    let key = record["dpop_key"]
        .as_str()
        .expect("the key is stored")
        .to_string();
    assert!(key.len() > 100, "a PKCS#8 key");
    let mut outputs = vec![login.stdout, login.stderr];
    for text in ["first", "second"] {
        let call = s.run(&[
            "call",
            "mcp__secure__echo",
            "--args",
            &json!({ "text": text }).to_string(),
            "--yes",
            "--json",
        ]);
        let outcome: Value = serde_json::from_slice(&call.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&call.stderr)));
        assert_eq!(outcome["status"], "ok", "{outcome:#}");
        assert!(outcome["result"]["text"]
            .as_str()
            .is_some_and(|t| t.contains(text)));
        outputs.extend([call.stdout, call.stderr]);
    }
    let demo_log = std::fs::read_to_string(&demo_err).expect("demo stderr");
    for said in [
        "DPoP nonce asked for at the token endpoint",
        "(authorization code, DPoP-bound)",
        "DPoP nonce asked for at the resource",
    ] {
        assert!(demo_log.contains(said), "no {said:?} in:\n{demo_log}");
    }
    assert!(!demo_log.contains("refused"), "{demo_log}");
    // Neither the token nor the key is in any output or the log.
    let log = std::fs::read_to_string(&s.log).expect("log file");
    for secret in tokens_in(&s.token_file()).iter().chain([&key]) {
        assert!(!log.contains(secret.as_str()), "a secret is in the log");
        for out in &outputs {
            assert!(!String::from_utf8_lossy(out).contains(secret.as_str()));
        }
    }
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
