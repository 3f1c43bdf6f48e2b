//! Tests of `load.rs` on configs that do not load: one fixture per error case with its exact
//! `file:line:col: message`, every error reported at its own place, brackets left open.

use super::tests::{load_fixture, load_text, test_env};
use super::*;
use crate::config::syntax::unclosed_flow;

#[test]
fn error_fixtures_give_exact_located_messages() {
    let cases: &[(&str, ConfigErrorKind, &str)] = &[
        (
            "unknown_key.yaml",
            ConfigErrorKind::Schema,
            "5:7: mcp.servers[0]: unknown key `comand` (did you mean `command`?)",
        ),
        (
            "bad_name.yaml",
            ConfigErrorKind::Invalid,
            "5:13: invalid server name \"Bad_Name\": a name must match \
             ^[a-z0-9]([a-z0-9-]*[a-z0-9])?$ (lowercase letters, digits and inner hyphens)",
        ),
        (
            "duplicate_name.yaml",
            ConfigErrorKind::DuplicateName,
            "9:13: duplicate server name \"files\" (first defined at \
             tests/fixtures/config/duplicate_name.yaml:4:13)",
        ),
        (
            "stdio_no_command.yaml",
            ConfigErrorKind::Invalid,
            "3:7: server \"files\" uses transport stdio but has no `command`",
        ),
        (
            "http_no_url.yaml",
            ConfigErrorKind::Invalid,
            "4:7: server \"remote\" uses transport streamable_http but has no `url`",
        ),
        (
            "bad_duration.yaml",
            ConfigErrorKind::Invalid,
            "5:24: mcp.servers[0].request_timeout: invalid duration \"10 sec\": unknown unit \
             \"sec\" (use ms, s, m or h; a plain number is seconds)",
        ),
        (
            "unset_var.yaml",
            ConfigErrorKind::Expansion,
            "5:18: environment variable NOT_SET_ANYWHERE is not set (in mcp.servers[0].args[1])",
        ),
        (
            "syntax_error.yaml",
            ConfigErrorKind::Syntax,
            "5:6: invalid YAML: while parsing a block collection, did not find expected '-' \
             indicator",
        ),
        (
            "bad_enum.yaml",
            ConfigErrorKind::Schema,
            "6:13: policy.approval: unknown value `sometimes`, expected one of \
             `ask_mutating`, `ask_all`, `never`",
        ),
    ];
    for (fixture, kind, expected) in cases {
        let err = match load_fixture(fixture) {
            Ok(config) => panic!("{fixture}: loaded, expected an error: {config:?}"),
            Err(err) => err,
        };
        assert_eq!(
            err.to_string(),
            format!("tests/fixtures/config/{fixture}:{expected}"),
            "{fixture}"
        );
        assert_eq!(err.kind(), *kind, "{fixture}");
        assert!(err.position().is_some(), "{fixture}");
    }
}

#[test]
fn unreadable_file_is_a_read_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("missing.yaml");
    let err = load(&path).expect_err("missing file");
    assert_eq!(err.kind(), ConfigErrorKind::Read);
    let shown = err.to_string();
    let prefix = format!("{}: cannot read: ", path.display());
    assert!(shown.starts_with(&prefix), "{shown}");
}

#[test]
fn expansion_errors_are_located() {
    let err = load_text(
        "mcp:\n  servers:\n    - name: a\n      command: x\n      env:\n        K: ${NOPE}\n",
    )
    .expect_err("unset");
    assert_eq!(
        err.to_string(),
        "/etc/aimon/cfg.yaml:6:12: environment variable NOPE is not set (in mcp.servers[0].env.K)"
    );
    let err = load_text("mcp:\n  servers:\n    - name: a\n      command: ${HOME\n")
        .expect_err("unterminated");
    assert_eq!(err.kind(), ConfigErrorKind::Expansion);
    assert_eq!(
        err.to_string(),
        "/etc/aimon/cfg.yaml:4:16: unterminated \"${\" (write \"$${\" for a literal \"${\") \
         (in mcp.servers[0].command)"
    );
}

#[test]
fn schema_errors_are_located() {
    let cases = [
        (
            "mcp:\n  servers: 5\n",
            "2:12: mcp.servers: expected a list, got a number",
        ),
        (
            "mcp:\n  servers:\n    - command: x\n",
            "3:7: mcp.servers[0]: missing `name`",
        ),
        (
            "mcp:\n  servers:\n    - name: a\n      command: x\n      enabled: maybe\n",
            "5:16: mcp.servers[0].enabled: expected true or false, got a string",
        ),
        (
            "mcp:\n  servers:\n    - name: a\n      command: x\n      request_timeout: [1]\n",
            "5:24: mcp.servers[0].request_timeout: expected a duration such as 500ms, 10s, 2m \
             or 1h, got a list",
        ),
        (
            "mcp:\n  startup_budget: soon\n",
            "2:19: mcp.startup_budget: invalid duration \"soon\": expected a number then ms, s, \
             m or h (e.g. 500ms, 10s, 1.5s)",
        ),
        (
            "extra: 1\n",
            "1:1: unknown key `extra`, expected one of `mcp`, `policy`, `notifications`, `hooks`, `agent`, `gateway`, `telemetry`, `daemon`",
        ),
        (
            "mcp:\n  servers:\n    - name: a\n      command: x\n      restart: always\n",
            "5:16: mcp.servers[0].restart: unknown value `always`, expected one of `never`, \
             `on_failure`",
        ),
    ];
    for (text, expected) in cases {
        let err = load_text(text).expect_err(text);
        assert_eq!(
            err.to_string(),
            format!("/etc/aimon/cfg.yaml:{expected}"),
            "{text:?}"
        );
    }
}

#[test]
fn blank_command_or_url_counts_as_missing() {
    let err = load_text("mcp:\n  servers:\n    - name: a\n      command: \"\"\n")
        .expect_err("blank command");
    assert_eq!(
        err.to_string(),
        "/etc/aimon/cfg.yaml:3:7: server \"a\" uses transport stdio but has no `command`"
    );
    let err = load_text("mcp:\n  servers:\n    - {name: b, transport: sse, url: ' '}\n")
        .expect_err("blank url");
    assert_eq!(
        err.to_string(),
        "/etc/aimon/cfg.yaml:3:8: server \"b\" uses transport sse but has no `url`"
    );
}

#[test]
fn a_server_url_with_credentials_is_a_located_error_that_does_not_quote_them() {
    let err = load_text(
        "mcp:\n  servers:\n    - name: r\n      transport: streamable_http\n      url: https://me:s3cret@h.example/mcp\n",
    )
    .expect_err("credentials in the url");
    let text = err.to_string();
    assert!(
        text.starts_with("/etc/aimon/cfg.yaml:5:12: url: a user name or password in the URL"),
        "{text}"
    );
    assert!(!text.contains("s3cret"), "{text}");
}

#[test]
fn keys_of_the_other_transport_are_located_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "mcp:\n  servers:\n    - name: a\n      command: x\n      url: http://h/mcp\n",
            "5:7: server \"a\" uses transport stdio but sets `url`, which only streamable_http \
             and sse servers use",
        ),
        (
            "mcp:\n  servers:\n    - name: a\n      command: x\n      bearer_token: t\n",
            "5:7: server \"a\" uses transport stdio but sets `bearer_token`, which only \
             streamable_http and sse servers use",
        ),
        (
            "mcp:\n  servers:\n    - name: a\n      command: x\n      headers: {A: b}\n",
            "5:7: server \"a\" uses transport stdio but sets `headers`, which only \
             streamable_http and sse servers use",
        ),
        (
            "mcp:\n  servers:\n    - name: r\n      transport: streamable_http\n      \
             url: http://h/mcp\n      command: x\n",
            "6:7: server \"r\" uses transport streamable_http but sets `command`, which only \
             stdio servers use",
        ),
        (
            "mcp:\n  servers:\n    - name: r\n      transport: sse\n      url: http://h/sse\n      \
             env: {A: b}\n",
            "6:7: server \"r\" uses transport sse but sets `env`, which only stdio servers use",
        ),
        (
            "mcp:\n  servers:\n    - name: r\n      transport: sse\n      url: ftp://h/sse\n",
            "5:12: url \"ftp://h/sse\" must start with http:// or https://",
        ),
        (
            "mcp:\n  servers:\n    - name: r\n      transport: sse\n      url: http://h\n      \
             headers: {\"bad name\": x}\n",
            "6:17: invalid header name \"bad name\"",
        ),
        (
            "mcp:\n  servers:\n    - name: r\n      transport: sse\n      url: http://h\n      \
             bearer_token: \"${EMPTY_TOKEN}\"\n",
            "6:21: bearer_token is empty or not a valid header value (control characters or \
             non-ASCII)",
        ),
    ];
    let env = |name: &str| match name {
        "EMPTY_TOKEN" => Some(String::new()),
        other => test_env(other),
    };
    for (text, expected) in cases {
        let err = load_str(Path::new("/etc/aimon/cfg.yaml"), text, &env).expect_err(text);
        assert_eq!(
            err.to_string(),
            format!("/etc/aimon/cfg.yaml:{expected}"),
            "{text:?}"
        );
        assert_eq!(err.kind(), ConfigErrorKind::Invalid);
    }
}

#[test]
fn an_unclosed_bracket_is_reported_where_it_opens() {
    let err = load_fixture("unclosed_bracket.yaml").expect_err("unclosed");
    assert_eq!(err.kind(), ConfigErrorKind::Syntax);
    let shown = err.to_string();
    assert!(
        shown.starts_with(
            "tests/fixtures/config/unclosed_bracket.yaml:5:13: invalid YAML: this `[` is never \
             closed with `]` (the parser gave up on line 6:"
        ),
        "{shown}"
    );
    // Same for `{`, and a bracket inside quotes or a comment does not count.
    let err = load_text("mcp:\n  servers:\n    - name: a # [x\n      command: \"[\"\n      env: {A: b\n      args: [x]\n")
        .expect_err("unclosed");
    assert!(
        err.to_string()
            .starts_with("/etc/aimon/cfg.yaml:5:12: invalid YAML: this `{` is never closed"),
        "{err}"
    );
    // A mistake on the bracket's own line keeps the parser's place.
    let err = load_text("a: [b: c: d]\n").expect_err("bad");
    assert!(!err.to_string().contains("never closed"), "{err}");
}

#[test]
fn every_error_is_reported_each_at_its_place() {
    let text = "\
mcp:
  servers:
    - name: a
      comand: x
      enabled: maybe
    - name: b
      command: y
      restart: always
      args: [1, [2]]
polcy:
  approval: never
";
    let err = load_text(text).expect_err("bad");
    assert_eq!(err.count(), 5);
    assert_eq!(
        err.report(),
        "/etc/aimon/cfg.yaml:4:7: mcp.servers[0]: unknown key `comand` (did you mean `command`?)\n\
         /etc/aimon/cfg.yaml:5:16: mcp.servers[0].enabled: expected true or false, got a string\n\
         /etc/aimon/cfg.yaml:8:16: mcp.servers[1].restart: unknown value `always`, expected one of `never`, `on_failure`\n\
         /etc/aimon/cfg.yaml:9:17: mcp.servers[1].args[1]: expected a string, got a list\n\
         /etc/aimon/cfg.yaml:10:1: unknown key `polcy` (did you mean `policy`?)"
    );
    // Once the shape is right, every invalid value, across servers and rules.
    let text = "\
mcp:
  startup_budget: soon
  servers:
    - name: Bad_1
      command: ${NOPE}
    - {name: ok, transport: sse, url: ftp://x}
    - name: Bad_1
      command: x
notifications:
  rewake:
    - {server: ghost, method: m, event: e}
";
    let err = load_text(text).expect_err("bad");
    let lines: Vec<String> = err.all().map(|e| e.message().to_string()).collect();
    assert_eq!(
        lines,
        vec![
            "mcp.startup_budget: invalid duration \"soon\": expected a number then ms, s, m or h (e.g. 500ms, 10s, 1.5s)".to_string(),
            "invalid server name \"Bad_1\": a name must match ^[a-z0-9]([a-z0-9-]*[a-z0-9])?$ (lowercase letters, digits and inner hyphens)".to_string(),
            "environment variable NOPE is not set (in mcp.servers[0].command)".to_string(),
            "url \"ftp://x\" must start with http:// or https://".to_string(),
            "duplicate server name \"Bad_1\" (first defined at /etc/aimon/cfg.yaml:4:13)".to_string(),
            "notifications.rewake[0].server: unknown server \"ghost\" (configured: Bad_1, ok)".to_string(),
        ]
    );
}

#[test]
fn at_most_twenty_errors_are_kept() {
    let mut text = String::from("mcp:\n  servers:\n");
    for i in 0..30 {
        text.push_str(&format!("    - {{name: s{i}, command: x, colour: red}}\n"));
    }
    let err = load_text(&text).expect_err("bad");
    assert_eq!(err.count(), 30);
    assert_eq!(err.all().count(), crate::config::MAX_ERRORS);
    assert!(err
        .report()
        .ends_with("… and 10 more (only the first 20 are shown)"));
}

#[test]
fn telemetry_and_daemon_mistakes_are_located_and_a_secret_in_the_url_is_not_quoted() {
    let cases = [
        (
            "telemetry:\n  otlp_endpoint: localhost:4318\n",
            "/etc/aimon/cfg.yaml:2:18: telemetry.otlp_endpoint: \"localhost:4318\" must be an \
             http:// or https:// URL (the collector's OTLP/HTTP address, e.g. \
             http://localhost:4318)",
        ),
        (
            "telemetry:\n  otlp_endpoint: https://me:pw-123@otel.example\n",
            "/etc/aimon/cfg.yaml:2:18: telemetry.otlp_endpoint: a user name or password in the \
             URL would be shown in errors: give them as a header under telemetry.headers",
        ),
        (
            "telemetry:\n  headers: {\"bad name\": x}\n",
            "/etc/aimon/cfg.yaml:2:13: invalid header name \"bad name\"",
        ),
        (
            "telemetry:\n  include_payloads: sometimes\n",
            "/etc/aimon/cfg.yaml:2:21: telemetry.include_payloads: expected true or false, got a string",
        ),
    ];
    for (text, message) in cases {
        let err = load_text(text).expect_err(text);
        assert_eq!(err.to_string(), message, "{text}");
    }
    for (text, message) in [
        (
            "daemon:\n  listen: 7450\n",
            "/etc/aimon/cfg.yaml:2:11: daemon.listen needs tls_cert and tls_key: consoles attach \
             over TCP with TLS only",
        ),
        (
            "daemon:\n  tls_key: k.pem\n",
            "/etc/aimon/cfg.yaml:2:12: daemon.tls_key is for daemon.listen, which is not set",
        ),
        (
            "daemon:\n  sessions: 0\n",
            "/etc/aimon/cfg.yaml:2:13: daemon.sessions: must be at least 1",
        ),
    ] {
        assert_eq!(load_text(text).expect_err(text).to_string(), message);
    }
    let held = |text: &str| load_text(text).expect(text).daemon.sessions;
    assert_eq!(held("daemon:\n  sessions: 5\n"), 5);
    assert_eq!(held("daemon: {}\n"), 32);
    let config = load_text(
        "telemetry:\n  otlp_endpoint: http://127.0.0.1:4318\n  headers: {Authorization: Bearer t0ken-secret}\n",
    )
    .unwrap();
    assert_eq!(
        config.telemetry.otlp_endpoint.as_deref(),
        Some("http://127.0.0.1:4318")
    );
    assert!(!config.telemetry.include_payloads);
    let shown = format!("{:?}", config.telemetry);
    assert!(!shown.contains("t0ken-secret"), "{shown}");
}

#[test]
fn brackets_inside_plain_scalars_do_not_count_as_open() {
    assert_eq!(unclosed_flow("a: foo[bar\nb: x{y\n"), None);
    assert_eq!(
        unclosed_flow("a: [x, 'it''s [', \"\\\"[\"\nb"),
        Some((3, '['))
    );
    assert_eq!(unclosed_flow("a: [x, {b: [1]}]\n"), None);
    assert_eq!(unclosed_flow("- {a: [1, 2]\n"), Some((2, '{')));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// Whatever the text, loading gives a config or located errors, never a panic.
    #[test]
    fn any_text_loads_or_is_located(text in "[a-z_:\\[\\]{},'\" #\\-\\n]{0,80}") {
        match load_text(&text) {
            Ok(_) => {}
            Err(e) => {
                for err in e.all() {
                    proptest::prop_assert!(err.position().is_some(), "{err}");
                }
            }
        }
    }
}
