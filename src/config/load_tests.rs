//! Tests of `load.rs`: one fixture per error case with its exact `file:line:col: message`, the
//! valid fixtures, `${VAR}` expansion, and durations.

use super::*;
use crate::config::syntax::unclosed_flow;
use crate::config::{AnnotationTrust, ApprovalPolicy, SideEffectCeiling};
use crate::config::{RestartPolicy, RewakeRule};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/config")
}

fn test_env(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/op".to_string()),
        "TOKEN" => Some("t0k".to_string()),
        "HOST" => Some("example.com".to_string()),
        "AIMON_CONSOLE" => Some("/opt/aimon/aimon-console".to_string()),
        _ => None,
    }
}

/// Load a fixture through `load_str`, naming it by its path relative to the crate root (as an
/// operator would type it), so messages do not depend on where the checkout lives.
fn load_fixture(name: &str) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(fixture_dir().join(name))
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"));
    load_str(
        &Path::new("tests/fixtures/config").join(name),
        &text,
        &test_env,
    )
}

fn load_text(text: &str) -> Result<Config, ConfigError> {
    load_str(Path::new("/etc/aimon/cfg.yaml"), text, &test_env)
}

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
fn load_names_the_file_as_given() {
    let path = fixture_dir().join("bad_enum.yaml");
    let err = load(&path).expect_err("bad enum");
    assert_eq!(
        err.to_string(),
        format!(
            "{}:6:13: policy.approval: unknown value `sometimes`, expected one of \
             `ask_mutating`, `ask_all`, `never`",
            path.display()
        )
    );
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
fn full_fixture_sets_every_key() {
    let config = load_fixture("full.yaml").expect("full.yaml loads");
    assert!(config.path.is_absolute());
    assert_eq!(config.path, fixture_dir().join("full.yaml"));
    assert_eq!(config.mcp.startup_budget, Some(Duration::from_secs(20)));
    assert_eq!(
        config.policy,
        PolicyConfig {
            side_effect_ceiling: SideEffectCeiling::ReadOnly,
            approval: ApprovalPolicy::AskAll,
            local_tools: LocalTools::ALL,
        }
    );
    let [files, remote, legacy] = config.mcp.servers.as_slice() else {
        panic!("three servers: {:?}", config.mcp.servers);
    };
    assert_eq!(
        *files,
        ServerConfig {
            name: "files".to_string(),
            transport: TransportKind::Stdio,
            command: Some("/opt/aimon/aimon-console".to_string()),
            args: vec![
                "demo-server".to_string(),
                "--root=/home/op/data".to_string(),
                "literal-${HOME}".to_string(),
            ],
            env: BTreeMap::from([
                ("PLAIN".to_string(), "x".to_string()),
                ("TOKEN".to_string(), "t0k".to_string()),
            ]),
            cwd: Some(fixture_dir().join("work")),
            url: None,
            headers: BTreeMap::new(),
            bearer_token: None,
            oauth: None,
            request_timeout: Duration::from_millis(1500),
            annotation_trust: AnnotationTrust::Trust,
            restart: RestartPolicy::Never,
            enabled: false,
            roots: None,
        }
    );
    assert_eq!(
        config.notifications.rewake,
        vec![RewakeRule {
            server: "files".to_string(),
            method: "notifications/message".to_string(),
            matches: BTreeMap::from([
                ("data.count".to_string(), serde_json::json!(3)),
                ("level".to_string(), serde_json::json!("info")),
            ]),
            event: "files-changed".to_string(),
        }]
    );
    assert_eq!(remote.name, "remote-2");
    assert_eq!(remote.transport, TransportKind::StreamableHttp);
    assert_eq!(remote.url.as_deref(), Some("https://example.com/mcp"));
    assert_eq!(
        remote.headers,
        BTreeMap::from([("Authorization".to_string(), "Bearer t0k".to_string())])
    );
    assert_eq!(remote.request_timeout, Duration::from_millis(500));
    assert_eq!(remote.annotation_trust, AnnotationTrust::Ignore);
    assert_eq!(remote.restart, RestartPolicy::OnFailure);
    assert!(remote.enabled);
    assert_eq!(legacy.transport, TransportKind::Sse);
    assert_eq!(legacy.bearer_token.as_deref(), Some("t0k"));
    assert_eq!(legacy.request_timeout, Duration::from_secs(2));
}

#[test]
fn empty_configs_are_valid_with_defaults() {
    let expected = |config: &Config| {
        let folder = config.path.parent().expect("a folder");
        assert_eq!(
            config.mcp,
            McpConfig {
                roots: vec![file_uri(folder)],
                ..McpConfig::default()
            }
        );
        assert_eq!(config.policy, PolicyConfig::default());
        assert_eq!(
            config.policy.side_effect_ceiling,
            SideEffectCeiling::Mutating
        );
        assert_eq!(config.policy.approval, ApprovalPolicy::AskMutating);
    };
    expected(&load_fixture("empty.yaml").expect("empty.yaml"));
    for text in [
        "",
        "# only a comment\n",
        "~\n",
        "---\n",
        "mcp:\n",
        "mcp: {}\n",
        "mcp:\n  servers: []\n",
        "mcp:\n  servers:\npolicy: {}\n",
    ] {
        match load_text(text) {
            Ok(config) => expected(&config),
            Err(e) => panic!("{text:?}: {e}"),
        }
    }
}

#[test]
fn server_defaults() {
    let config = load_text("mcp:\n  servers:\n    - name: a\n      command: x\n").expect("loads");
    let server = &config.mcp.servers[0];
    assert_eq!(server.transport, TransportKind::Stdio);
    assert!(server.args.is_empty());
    assert!(server.env.is_empty());
    assert!(server.headers.is_empty());
    assert_eq!(server.cwd, None);
    assert_eq!(server.url, None);
    assert_eq!(server.request_timeout, DEFAULT_REQUEST_TIMEOUT);
    assert_eq!(server.request_timeout, Duration::from_secs(30));
    assert_eq!(server.annotation_trust, AnnotationTrust::Ignore);
    assert_eq!(server.restart, RestartPolicy::OnFailure);
    assert!(server.enabled);
    assert!(config.notifications.rewake.is_empty());
    assert_eq!(config.path, PathBuf::from("/etc/aimon/cfg.yaml"));
}

#[test]
fn cwd_is_relative_to_the_config_folder() {
    let text = "mcp:\n  servers:\n    - {name: a, command: x, cwd: ./sub/dir}\n    \
                - {name: b, command: x, cwd: ../up}\n    - {name: c, command: x, cwd: '${HOME}/w'}\n";
    let config = load_text(text).expect("loads");
    let cwds: Vec<_> = config.mcp.servers.iter().map(|s| s.cwd.clone()).collect();
    assert_eq!(
        cwds,
        vec![
            Some(PathBuf::from("/etc/aimon/sub/dir")),
            Some(PathBuf::from("/etc/aimon/../up")),
            Some(PathBuf::from("/home/op/w")),
        ]
    );
}

#[test]
fn expansion_covers_every_string_but_the_name() {
    let text = "mcp:\n  servers:\n    - name: a\n      command: ${HOME}/bin\n      \
                args: [\"$${HOME}\", \"${TOKEN}\"]\n      env: {K: \"${TOKEN}\"}\n    \
                - name: b\n      transport: sse\n      url: http://${HOST}/sse\n      \
                headers: {H: \"${TOKEN}\"}\n";
    let config = load_text(text).expect("loads");
    let [a, b] = config.mcp.servers.as_slice() else {
        panic!("two servers");
    };
    assert_eq!(a.command.as_deref(), Some("/home/op/bin"));
    assert_eq!(a.args, vec!["${HOME}".to_string(), "t0k".to_string()]);
    assert_eq!(a.env.get("K").map(String::as_str), Some("t0k"));
    assert_eq!(b.url.as_deref(), Some("http://example.com/sse"));
    assert_eq!(b.headers.get("H").map(String::as_str), Some("t0k"));

    // The name is never expanded: `${X}` in it is simply an invalid name.
    let err =
        load_text("mcp:\n  servers:\n    - name: ${HOME}\n      command: x\n").expect_err("name");
    assert_eq!(err.kind(), ConfigErrorKind::Invalid);
    assert!(err.message().contains("\"${HOME}\""), "{err}");
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
fn aimon_console_falls_back_to_the_running_binary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.yaml");
    std::fs::write(
        &path,
        "mcp:\n  servers:\n    - name: demo\n      command: ${AIMON_CONSOLE}\n",
    )
    .expect("write");
    let config = load(&path).expect("loads");
    let expected = match std::env::var_os("AIMON_CONSOLE") {
        Some(v) => v.to_string_lossy().into_owned(),
        None => std::env::current_exe()
            .expect("current exe")
            .to_string_lossy()
            .into_owned(),
    };
    assert_eq!(config.mcp.servers[0].command.as_deref(), Some(&*expected));
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
            "1:1: unknown key `extra`, expected one of `mcp`, `policy`, `notifications`, `agent`",
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
fn bearer_token_expands_and_never_shows_in_debug() {
    let text = "mcp:\n  servers:\n    - name: r\n      transport: streamable_http\n      \
                url: http://h/mcp\n      bearer_token: ${TOKEN}\n      \
                headers: {Authorization: \"Bearer ${TOKEN}\", X-Team: ops}\n";
    let config = load_text(text).expect("loads");
    let server = &config.mcp.servers[0];
    assert_eq!(server.bearer_token.as_deref(), Some("t0k"));
    let shown = format!("{config:?}");
    assert!(!shown.contains("t0k"), "{shown}");
    assert!(shown.contains("ops"), "{shown}");
}

#[test]
fn scalar_strings_accept_numbers() {
    let config = load_text(
        "mcp:\n  servers:\n    - name: a\n      command: x\n      args: [1, 2.5]\n      env: {PORT: 8080}\n",
    )
    .expect("loads");
    let server = &config.mcp.servers[0];
    assert_eq!(server.args, vec!["1".to_string(), "2.5".to_string()]);
    assert_eq!(server.env.get("PORT").map(String::as_str), Some("8080"));
}

#[test]
fn parse_duration_cases() {
    let ok = [
        ("500ms", Duration::from_millis(500)),
        ("10s", Duration::from_secs(10)),
        ("2m", Duration::from_secs(120)),
        ("1h", Duration::from_secs(3600)),
        ("1.5s", Duration::from_millis(1500)),
        ("0.1s", Duration::from_millis(100)),
        ("1.25m", Duration::from_secs(75)),
        ("7", Duration::from_secs(7)),
        ("2.5", Duration::from_millis(2500)),
        (" 3s ", Duration::from_secs(3)),
        ("0s", Duration::ZERO),
        ("1.0000000001s", Duration::from_secs(1)),
    ];
    for (text, expected) in ok {
        assert_eq!(parse_duration(text), Ok(expected), "{text:?}");
    }
    for bad in [
        "", "s", "ms", "-1s", "1.2.3s", "10x", "1d", "abc", "1 s s", ".",
    ] {
        assert!(parse_duration(bad).is_err(), "{bad:?} should fail");
    }
    assert_eq!(
        parse_duration("10x"),
        Err("invalid duration \"10x\": unknown unit \"x\" (use ms, s, m or h; a plain number is seconds)".to_string())
    );
    assert!(parse_duration("99999999999999999999999999999h").is_err());
}

#[test]
fn server_name_rule() {
    for good in ["a", "files", "a-b", "x1", "1x", "a-b-c9"] {
        assert!(is_valid_server_name(good), "{good}");
    }
    for bad in ["", "-a", "a-", "A", "a_b", "a.b", "a b", "ä"] {
        assert!(!is_valid_server_name(bad), "{bad}");
    }
}

#[test]
fn roots_default_to_the_config_folder_and_accept_folders_and_file_uris() {
    let config = load_text("").unwrap();
    assert_eq!(config.mcp.roots, vec!["file:///etc/aimon".to_string()]);
    let config =
        load_text("mcp:\n  roots: [work, \"${HOME}/my notes\", \"file:///srv/x\", /abs]\n")
            .unwrap();
    assert_eq!(
        config.mcp.roots,
        vec![
            "file:///etc/aimon/work",
            "file:///home/op/my%20notes",
            "file:///srv/x",
            "file:///abs",
        ]
    );
    assert!(load_text("mcp:\n  roots: []\n")
        .unwrap()
        .mcp
        .roots
        .is_empty());
    let err = load_text("mcp:\n  roots: [\"https://x/y\"]\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "/etc/aimon/cfg.yaml:2:11: root \"https://x/y\" must be a folder or a file:// URI"
    );
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
fn local_tools_default_to_read_and_are_listed_in_policy() {
    let config = load_text("").expect("empty");
    assert_eq!(config.policy.local_tools, LocalTools::default());
    assert_eq!(config.policy.local_tools.names(), vec!["read"]);
    let config = load_text("policy:\n  local_tools: [bash]\n").expect("loads");
    assert_eq!(config.policy.local_tools.names(), vec!["bash"]);
    let config = load_text("policy:\n  local_tools: []\n").expect("loads");
    assert_eq!(config.policy.local_tools, LocalTools::NONE);
    let err = load_text("policy:\n  local_tools: [reed]\n").expect_err("bad");
    assert_eq!(
        err.to_string(),
        "/etc/aimon/cfg.yaml:2:17: policy.local_tools[0]: unknown value `reed` (did you mean `read`?), expected one of `read`, `bash`"
    );
}

#[test]
fn true_and_false_as_strings() {
    let config =
        load_text("mcp:\n  servers:\n    - name: a\n      command: x\n      args: [true, -n]\n")
            .expect("loads");
    assert_eq!(
        config.mcp.servers[0].args,
        vec!["true".to_string(), "-n".to_string()]
    );
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

#[test]
fn max_concurrent_starts_is_a_whole_number_from_1() {
    let config = load_text("mcp:\n  max_concurrent_starts: 4\n").expect("loads");
    assert_eq!(config.mcp.max_concurrent_starts, Some(4));
    let err = load_text("mcp:\n  max_concurrent_starts: many\n").expect_err("bad");
    assert_eq!(
        err.to_string(),
        "/etc/aimon/cfg.yaml:2:26: mcp.max_concurrent_starts: expected a whole number, got a string"
    );
    let err =
        load_text("mcp:\n  max_concurrent_starts: 0\n  startup_budget: soon\n").expect_err("bad");
    assert_eq!(err.count(), 2, "{}", err.report());
    assert!(
        err.report().contains("must be at least 1"),
        "{}",
        err.report()
    );
}
