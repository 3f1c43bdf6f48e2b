//! Tests of `agent.rs`: both forms of the section, shared settings, defaults, redaction and
//! every located error.

use std::path::Path;
use std::time::Duration;

use super::*;
use crate::config::{load_str, Config, ConfigError};

fn env(name: &str) -> Option<String> {
    match name {
        "KEY" => Some("sk-s3cr3t".to_string()),
        "RT" => Some("5s".to_string()),
        "SOON" => Some("soon".to_string()),
        "AIMON_CONSOLE" => Some("/opt/aimon".to_string()),
        _ => None,
    }
}

fn load(text: &str) -> Result<Config, ConfigError> {
    load_str(Path::new("/etc/aimon/cfg.yaml"), text, &env)
}

#[test]
fn an_inline_agent_is_the_profile_default_with_defaults() {
    let config =
        load("agent:\n  base_url: http://127.0.0.1:8080/v1\n  model: smol\n").expect("loads");
    let agent = config.agent.expect("agent");
    assert_eq!(agent.default, "default");
    let p = agent.profile(None).expect("profile");
    assert_eq!(p.name, "default");
    assert_eq!(
        p.endpoint,
        ModelEndpoint::Url("http://127.0.0.1:8080/v1".into())
    );
    assert_eq!(p.model, "smol");
    assert_eq!(p.max_turns, DEFAULT_MAX_TURNS);
    assert_eq!(p.request_timeout, DEFAULT_MODEL_TIMEOUT);
    assert!(p.stream);
    assert_eq!(p.system_prompt, DEFAULT_SYSTEM_PROMPT);
    assert_eq!(
        (p.temperature, p.max_tokens, p.api_key.as_deref()),
        (None, None, None)
    );
    assert!(load("mcp: {}\n").expect("loads").agent.is_none());
}

#[test]
fn profiles_share_the_settings_beside_models_and_expand_the_key() {
    let text = "agent:\n  default: demo\n  max_turns: 5\n  api_key: ${KEY}\n  request_timeout: 2s\n  models:\n    demo:\n      command: ${AIMON_CONSOLE}\n      args: [demo-model, --script, s.json]\n      cwd: sub\n      model: demo\n    remote:\n      base_url: https://api.example.com/v1\n      model: gpt\n      max_turns: 9\n      stream: false\n      temperature: 0.5\n      max_tokens: 100\n      headers: {X-Team: ops}\n";
    let agent = load(text).expect("loads").agent.expect("agent");
    assert_eq!(agent.default, "demo");
    let demo = agent.profile(None).expect("demo");
    assert_eq!(
        demo.endpoint,
        ModelEndpoint::Command {
            command: "/opt/aimon".into(),
            args: vec!["demo-model".into(), "--script".into(), "s.json".into()],
            env: Default::default(),
            cwd: Some("/etc/aimon/sub".into()),
        }
    );
    assert_eq!(demo.max_turns, 5);
    assert_eq!(demo.api_key.as_deref(), Some("sk-s3cr3t"));
    assert_eq!(demo.request_timeout, Duration::from_secs(2));
    let remote = agent.profile(Some("remote")).expect("remote");
    assert_eq!(remote.max_turns, 9);
    assert!(!remote.stream);
    assert_eq!(remote.temperature, Some(0.5));
    assert_eq!(remote.max_tokens, Some(100));
    assert_eq!(
        remote.headers.get("X-Team").map(String::as_str),
        Some("ops")
    );
    assert_eq!(
        agent.profile(Some("nope")).expect_err("unknown"),
        "no model profile named \"nope\" in agent.models (there are: demo, remote)"
    );
    // The key never shows in Debug output, of the profile or of the whole config.
    let shown = format!("{agent:?}");
    assert!(!shown.contains("sk-s3cr3t"), "{shown}");
    assert!(shown.contains("<redacted>"), "{shown}");
}

#[test]
fn mistakes_are_located_and_never_quote_the_key() {
    let cases = [
        ("agent:\n  model: m\n", "1:1: agent: no endpoint: give base_url (a running endpoint, e.g. http://127.0.0.1:8080/v1) or command (a program the console starts)"),
        ("agent:\n  base_url: http://h/v1\n", "1:1: agent: no `model` (the model name the endpoint expects)"),
        ("agent:\n  base_url: http://h/v1\n  command: x\n  model: m\n", "3:3: agent: give base_url or command, not both"),
        ("agent:\n  base_url: ftp://h\n  model: m\n", "2:13: agent.base_url: \"ftp://h\" must be an http:// or https:// URL"),
        ("agent:\n  base_url: http://h/v1\n  args: [x]\n  model: m\n", "3:3: agent: `args` goes with command, not base_url"),
        ("agent:\n  base_url: http://h/v1\n  model: m\n  max_turns: 0\n", "4:14: agent.max_turns must be at least 1"),
        ("agent:\n  base_url: http://h/v1\n  model: m\n  temperature: 3\n", "4:16: agent.temperature must be between 0 and 2, not 3"),
        ("agent:\n  base_url: http://h/v1\n  model: m\n  api_key: ${NOPE}\n", "4:12: environment variable NOPE is not set (in agent.api_key)"),
        ("agent:\n  base_url: http://h/v1\n  model: m\n  request_timeout: soon\n", "4:20: agent.request_timeout: invalid duration \"soon\": expected a number then ms, s, m or h (e.g. 500ms, 10s, 1.5s)"),
        ("agent:\n  base_url: http://h/v1\n  model: m\n  modle: x\n", "4:3: agent: unknown key `modle` (did you mean `model`?)"),
        ("agent:\n  models:\n    a: {base_url: http://h/v1, model: m}\n    b: {base_url: http://h/v1, model: m}\n", "2:3: agent.default is required when agent.models has more than one profile"),
        ("agent:\n  default: c\n  models:\n    a: {base_url: http://h/v1, model: m}\n", "2:12: agent.default: no profile named \"c\" in agent.models (there are: a)"),
        ("agent:\n  base_url: http://h/v1\n  models:\n    a: {base_url: http://h/v1, model: m}\n", "2:3: agent.base_url: with agent.models, each profile names its own endpoint (base_url or command); only shared settings go beside models"),
        ("agent:\n  models:\n    Bad: {base_url: http://h/v1, model: m}\n", "3:5: invalid model profile name \"Bad\": a name must match ^[a-z0-9]([a-z0-9-]*[a-z0-9])?$ (lowercase letters, digits and inner hyphens)"),
        ("agent:\n  models: {}\n", "2:11: agent.models is empty: give at least one profile"),
        ("agent:\n  default: x\n  base_url: http://h/v1\n  model: m\n", "2:12: agent.default names \"x\", but there is no agent.models: an inline agent is the one profile \"default\""),
        ("agent:\n  base_url: http://h/v1\n  model: m\n  headers: {\"Bad Name\": v}\n", "4:13: invalid header name \"Bad Name\""),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(text, expected)| {
            let got = load(text)
                .map(|_| String::new())
                .unwrap_or_else(|e| e.to_string());
            (got != format!("/etc/aimon/cfg.yaml:{expected}"))
                .then(|| format!("{text:?}\n  got {got}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // A key that is not a valid header value: the message names the key, not its value.
    let bad = load_str(
        Path::new("c.yaml"),
        "agent:\n  base_url: http://h/v1\n  model: m\n  api_key: ${KEY}\n",
        &|_| Some("sk-\u{7}bell".to_string()),
    )
    .expect_err("control character");
    assert!(!bad.to_string().contains("sk-"), "{bad}");
    assert!(
        bad.to_string()
            .contains("agent.api_key is empty or not a valid header value"),
        "{bad}"
    );
}

/// Every error of `text`, one `line:col: message` a line (the file name left out).
fn report(text: &str) -> String {
    match load(text) {
        Ok(_) => "loaded".to_string(),
        Err(e) => e
            .all()
            .map(|e| e.to_string().replace("/etc/aimon/cfg.yaml:", ""))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[test]
fn unknown_keys_in_a_profile_join_every_other_shape_error() {
    let text = "\
mcp:
  servers:
    - name: a
      comand: x
      request_timout: 5s
      enabled: maybe
agent:
  models:
    d:
      base_url: http://h/v1
      modle: m
";
    assert_eq!(
        report(text),
        "4:7: mcp.servers[0]: unknown key `comand` (did you mean `command`?)\n\
         5:7: mcp.servers[0]: unknown key `request_timout` (did you mean `request_timeout`?)\n\
         6:16: mcp.servers[0].enabled: expected true or false, got a string\n\
         11:7: agent.models.d: unknown key `modle` (did you mean `model`?)"
    );
    // Alone, the same words; a profile that is not a mapping is a shape error too.
    assert_eq!(
        report("agent:\n  models:\n    d:\n      base_url: http://h/v1\n      modle: m\n"),
        "5:7: agent.models.d: unknown key `modle` (did you mean `model`?)"
    );
    assert_eq!(
        report("agent:\n  models:\n    d: [x]\n    e: {model: m, colour: red}\n"),
        "3:8: agent.models.d: expected a mapping with `base_url`, `command`, `args`, `env`, `cwd`, `model`, `provider`, `api_key`, `headers`, `system_prompt`, `max_turns`, `request_timeout`, `stream`, `temperature`, `max_tokens`, `context_window`, `max_result_tokens`, `tool_search`, got a list\n\
         4:19: agent.models.e: unknown key `colour`, expected one of `base_url`, `command`, `args`, `env`, `cwd`, `model`, `provider`, `api_key`, `headers`, `system_prompt`, `max_turns`, `request_timeout`, `stream`, `temperature`, `max_tokens`, `context_window`, `max_result_tokens`, `tool_search`"
    );
    // A profile with nothing under it is checked like any other: it has no endpoint.
    assert_eq!(
        report("agent:\n  models:\n    d:\n"),
        "3:5: agent.models.d: no endpoint: give base_url (a running endpoint, e.g. http://127.0.0.1:8080/v1) or command (a program the console starts)\n\
         3:5: agent.models.d: no `model` (the model name the endpoint expects)"
    );
}

#[test]
fn every_invalid_value_of_the_section_is_reported_in_file_order() {
    let shared = "\
agent:
  max_turns: 0
  temperature: 3
  max_tokens: 0
  models:
    d: {base_url: http://h/v1, model: m}
";
    assert_eq!(
        report(shared),
        "2:14: agent.max_turns must be at least 1\n\
         3:16: agent.temperature must be between 0 and 2, not 3\n\
         4:15: agent.max_tokens must be at least 1"
    );
    let inline = "agent:\n  max_turns: 0\n  base_url: ftp://h\n  model: \"\"\n";
    assert_eq!(
        report(inline),
        "2:14: agent.max_turns must be at least 1\n\
         3:13: agent.base_url: \"ftp://h\" must be an http:// or https:// URL\n\
         4:10: agent.model must not be empty"
    );
    let profiles = "\
agent:
  default: c
  base_url: http://h/v1
  models:
    Bad: {base_url: http://h/v1, command: x}
    ok: {base_url: http://h/v1, args: [a], model: m, request_timeout: 0, max_tokens: 5000000000}
";
    assert_eq!(
        report(profiles),
        "2:12: agent.default: no profile named \"c\" in agent.models (there are: Bad, ok)\n\
         3:3: agent.base_url: with agent.models, each profile names its own endpoint (base_url or command); only shared settings go beside models\n\
         5:5: invalid model profile name \"Bad\": a name must match ^[a-z0-9]([a-z0-9-]*[a-z0-9])?$ (lowercase letters, digits and inner hyphens)\n\
         5:5: agent.models.Bad: no `model` (the model name the endpoint expects)\n\
         5:34: agent.models.Bad: give base_url or command, not both\n\
         6:33: agent.models.ok: `args` goes with command, not base_url\n\
         6:71: agent.models.ok.request_timeout must be more than 0\n\
         6:86: agent.models.ok.max_tokens must be at most 4294967295"
    );
}

#[test]
fn wrong_types_are_said_in_words_with_the_other_shape_errors() {
    let text = "\
agent:
  base_url: http://h/v1
  model: m
  stream: maybe
  temperature: hot
  max_tokens: -5
  max_turns: 2.5
  request_timeout: [1]
";
    assert_eq!(
        report(text),
        "4:11: agent.stream: expected true or false, got a string\n\
         5:16: agent.temperature: expected a number, got a string\n\
         6:15: agent.max_tokens: expected a whole number, 1 or more, got -5\n\
         7:14: agent.max_turns: expected a whole number, 1 or more, got 2.5\n\
         8:20: agent.request_timeout: expected a duration such as 500ms, 10s, 2m or 1h, got a list"
    );
    // A whole number is a number.
    let config =
        load("agent:\n  base_url: http://h/v1\n  model: m\n  temperature: 1\n").expect("loads");
    let agent = config.agent.expect("agent");
    assert_eq!(agent.profile(None).expect("default").temperature, Some(1.0));
}

#[test]
fn a_near_miss_names_the_nearest_keys() {
    assert_eq!(
        report("agent:\n  base_url: http://h/v1\n  modle: m\n"),
        "3:3: agent: unknown key `modle` (did you mean `model`?)"
    );
    assert_eq!(
        report("agent:\n  base_url: http://h/v1\n  modes: m\n"),
        "3:3: agent: unknown key `modes` (did you mean `model` or `models`?)"
    );
}

#[test]
fn an_empty_section_says_what_it_needs() {
    let empty = "agent: the section is empty: give one profile (`base_url` or `command`, and `model`) or named profiles under `models` (leave `agent:` out for no agent)";
    assert_eq!(report("agent:\n"), format!("1:1: {empty}"));
    assert_eq!(report("mcp: {}\nagent: {}\n"), format!("2:1: {empty}"));
    assert_eq!(report("agent: ~\n"), format!("1:1: {empty}"));
}

#[test]
fn a_bad_base_url_names_its_key() {
    assert_eq!(
        report("agent:\n  models:\n    x: {base_url: 'ftp://h', model: m}\n"),
        "3:19: agent.models.x.base_url: \"ftp://h\" must be an http:// or https:// URL"
    );
    assert_eq!(
        report("agent:\n  base_url: http://\n  model: m\n"),
        "2:13: agent.base_url: \"http://\" must be an http:// or https:// URL"
    );
    // Credentials in the URL: refused, and the URL (its password) not quoted.
    let text = "agent:\n  base_url: http://me:s3cret@127.0.0.1:8080/v1\n  model: m\n";
    let error = report(text);
    assert_eq!(
        error,
        "2:13: agent.base_url: a user name or password in the URL is not sent (and would be shown in errors): give the key as api_key, or a header under headers"
    );
    assert!(!error.contains("s3cret"));
    // An `@` past the authority is not a credential.
    assert!(!crate::config::agent_load::has_userinfo(
        "http://h:1/v1/a@b?x=@"
    ));
}

#[test]
fn durations_expand_variables() {
    let text = "\
mcp:
  startup_budget: ${RT}
  servers:
    - {name: a, command: x, request_timeout: '${RT}'}
agent:
  base_url: http://h/v1
  model: m
  request_timeout: ${RT}
";
    let config = load(text).expect("loads");
    assert_eq!(config.mcp.startup_budget, Some(Duration::from_secs(5)));
    assert_eq!(
        config.mcp.servers[0].request_timeout,
        Duration::from_secs(5)
    );
    let agent = config.agent.expect("agent");
    assert_eq!(
        agent.profile(None).expect("default").request_timeout,
        Duration::from_secs(5)
    );
    assert_eq!(
        report("agent:\n  base_url: http://h/v1\n  model: m\n  request_timeout: ${NOPE}\n  max_turns: 0\n"),
        "4:20: environment variable NOPE is not set (in agent.request_timeout)\n\
         5:14: agent.max_turns must be at least 1"
    );
    // Numbers and true/false are not expanded: the error says so.
    assert_eq!(
        report("agent:\n  base_url: http://h/v1\n  model: m\n  max_turns: ${N}\n"),
        "4:14: agent.max_turns: expected a whole number, 1 or more, got a string (`${VAR}` is expanded in strings and durations, not here)"
    );
    assert_eq!(
        report("mcp:\n  servers:\n    - {name: a, command: x, request_timeout: '${SOON}'}\n"),
        "3:46: mcp.servers[0].request_timeout: invalid duration \"soon\": expected a number then ms, s, m or h (e.g. 500ms, 10s, 1.5s)"
    );
}
