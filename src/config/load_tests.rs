//! Tests of `load.rs` on configs that load: the valid fixtures, defaults, `${VAR}` expansion,
//! and durations. Configs that do not load, each error at its place, are in `load_errors_tests.rs`.

use std::path::PathBuf;

use std::collections::BTreeMap;

use super::*;
use crate::config::parse_duration;
use crate::config::{AnnotationTrust, ApprovalPolicy, SideEffectCeiling};
use crate::config::{RestartPolicy, RewakeRule, StartMode};

pub(super) fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/config")
}

pub(super) fn test_env(name: &str) -> Option<String> {
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
pub(super) fn load_fixture(name: &str) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(fixture_dir().join(name))
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"));
    load_str(
        &Path::new("tests/fixtures/config").join(name),
        &text,
        &test_env,
    )
}

pub(super) fn load_text(text: &str) -> Result<Config, ConfigError> {
    load_str(Path::new("/etc/aimon/cfg.yaml"), text, &test_env)
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
            rules: Vec::new(),
            flagged: crate::config::FlaggedPolicy::Ask,
            bash_sandbox: crate::config::SandboxConfig {
                read: None,
                write: vec![PathBuf::from("/tmp/scratch")],
                network: true,
                required: false,
            },
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
            start: StartMode::Eager,
            enabled: false,
            roots: None,
            sandbox: Some(crate::config::SandboxConfig {
                read: Some(vec![PathBuf::from("/usr")]),
                write: vec![fixture_dir().join("out"), PathBuf::from("/home/op/notes")],
                network: false,
                required: true,
            }),
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
    // Any longer than 30 days could overflow a deadline made from it: refused, and said.
    assert_eq!(
        parse_duration("720h"),
        Ok(Duration::from_secs(30 * 24 * 3600))
    );
    assert_eq!(
        parse_duration("2000000000000000000s"),
        Err("invalid duration \"2000000000000000000s\": too long (at most 720h)".to_string())
    );
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
fn max_concurrent_starts_is_a_whole_number_from_1() {
    let config = load_text("mcp:\n  max_concurrent_starts: 4\n").expect("loads");
    assert_eq!(config.mcp.max_concurrent_starts, Some(4));
    let err = load_text("mcp:\n  max_concurrent_starts: many\n").expect_err("bad");
    assert_eq!(
        err.to_string(),
        "/etc/aimon/cfg.yaml:2:26: mcp.max_concurrent_starts: expected a whole number, 1 or more, got a string"
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
