//! The `hooks:` section (seed §7.1, declarative hooks): on an event (a call about to run, a
//! call that ran, a server ready or failed, the agent's prompt and turns), run an action — call
//! an MCP tool with arguments rendered from the event, or run a program given the event on
//! stdin. Read and checked here with located errors; the runtime runs them (`runtime/hooks/`).
//!
//! Apart from `load.rs` because hooks are a small schema of their own: which `match` keys go
//! with which event, one action of two kinds, and argument templates that keep any JSON value.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::context::Context;
use super::error::ConfigErrorKind;
use super::rules::{configured, tool_pattern, ToolPattern};
use super::spans::{child_path, index_path};
use super::values::relative_to;
use super::values::DurationText;

/// How long a hook may take when its action gives no `timeout`.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookEvent {
    /// A call passed its checks and is about to be decided on: the hook may allow or deny it.
    PreToolUse,
    /// A call ran (ok, error or cancelled).
    PostToolUse,
    /// The agent is given a prompt.
    UserPrompt,
    /// A runtime started (the console, a headless command, the agent).
    SessionStart,
    /// A server became ready (at start-up, after a restart).
    ServerReady,
    /// A server's start failed.
    ServerFailed,
    /// The agent finished a turn.
    TurnEnd,
}

impl HookEvent {
    /// Every event, as written in the config.
    pub const NAMES: &'static [&'static str] = &[
        "pre_tool_use",
        "post_tool_use",
        "user_prompt",
        "session_start",
        "server_ready",
        "server_failed",
        "turn_end",
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "pre_tool_use",
            HookEvent::PostToolUse => "post_tool_use",
            HookEvent::UserPrompt => "user_prompt",
            HookEvent::SessionStart => "session_start",
            HookEvent::ServerReady => "server_ready",
            HookEvent::ServerFailed => "server_failed",
            HookEvent::TurnEnd => "turn_end",
        }
    }

    /// Whether the event is about a call of a tool (so `match.tool` applies).
    pub fn has_tool(self) -> bool {
        match self {
            HookEvent::PreToolUse | HookEvent::PostToolUse => true,
            HookEvent::UserPrompt
            | HookEvent::SessionStart
            | HookEvent::ServerReady
            | HookEvent::ServerFailed
            | HookEvent::TurnEnd => false,
        }
    }

    /// Whether the event names a server (so `match.server` applies).
    pub fn has_server(self) -> bool {
        match self {
            HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::ServerReady
            | HookEvent::ServerFailed => true,
            HookEvent::UserPrompt | HookEvent::SessionStart | HookEvent::TurnEnd => false,
        }
    }
}

/// What a hook does.
#[derive(Debug, Clone, PartialEq)]
pub enum HookAction {
    /// Call `tool` (the server's own name for it) of `server` with `arguments` rendered from
    /// the event (`{{tool.name}}`, `{{arguments.title}}`…).
    McpTool {
        server: String,
        tool: String,
        arguments: Map<String, Value>,
    },
    /// Run `argv` (a program and its arguments) in the config file's folder, the event as
    /// JSON on its stdin.
    Command { argv: Vec<String>, cwd: PathBuf },
}

impl HookAction {
    /// `mcp_tool guard/check` or `command ./guard.sh`, for events and messages.
    pub fn describe(&self) -> String {
        match self {
            HookAction::McpTool { server, tool, .. } => format!("mcp_tool {server}/{tool}"),
            HookAction::Command { argv, .. } => {
                format!("command {}", argv.first().map_or("", String::as_str))
            }
        }
    }
}

/// One entry of `hooks`.
#[derive(Debug, Clone, PartialEq)]
pub struct HookConfig {
    pub event: HookEvent,
    /// Which calls (tool events) or servers (server events) it is for; empty: all.
    pub matches: ToolPattern,
    pub action: HookAction,
    /// The longest the action may take; then it is stopped and the hook counts as silent.
    pub timeout: Duration,
}

/// One hook as written.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a hook mapping (event, match, action)"
)]
pub(super) struct RawHook {
    event: HookEvent,
    #[serde(default, rename = "match")]
    matches: Option<RawMatch>,
    action: RawAction,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping with `tool` and `server`")]
struct RawMatch {
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    server: Option<String>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `mcp_tool` or `command`, and `timeout`"
)]
struct RawAction {
    #[serde(default)]
    mcp_tool: Option<RawMcpTool>,
    #[serde(default)]
    command: Option<Vec<String>>,
    #[serde(default)]
    timeout: Option<DurationText>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `server`, `tool` and `arguments`"
)]
struct RawMcpTool {
    server: String,
    tool: String,
    #[serde(default)]
    arguments: Option<serde_yaml::Mapping>,
}

/// Checks the hooks against the servers named in the file (`known`); relative program paths
/// are made absolute against `base` (the config file's folder). Each mistake is recorded in
/// `cx`; the hooks without one are returned in order.
pub(super) fn hook_list(
    cx: &Context<'_>,
    raw: Vec<RawHook>,
    known: &[String],
    base: &Path,
) -> Vec<HookConfig> {
    raw.into_iter()
        .enumerate()
        .filter_map(|(i, hook)| one_hook(cx, &index_path("hooks", i), hook, known, base))
        .collect()
}

fn one_hook(
    cx: &Context<'_>,
    node: &str,
    raw: RawHook,
    known: &[String],
    base: &Path,
) -> Option<HookConfig> {
    let mut ok = true;
    let event = raw.event;
    let match_node = child_path(node, "match");
    let matches = match raw.matches {
        None => ToolPattern::default(),
        Some(m) => {
            for (key, set, applies) in [
                ("tool", m.tool.is_some(), event.has_tool()),
                ("server", m.server.is_some(), event.has_server()),
            ] {
                if set && !applies {
                    let at = child_path(&match_node, key);
                    cx.report(cx.error(
                        ConfigErrorKind::Invalid,
                        &at,
                        format!(
                            "{at}: a {} hook has no {key} to match (match.tool is for pre_tool_use and post_tool_use, match.server for those and server_ready, server_failed)",
                            event.as_str()
                        ),
                    ));
                    ok = false;
                }
            }
            match tool_pattern(cx, &match_node, m.tool, m.server, known) {
                Some(p) => p,
                None => {
                    ok = false;
                    ToolPattern::default()
                }
            }
        }
    };
    let action_node = child_path(node, "action");
    let timeout = match &raw.action.timeout {
        None => DEFAULT_HOOK_TIMEOUT,
        Some(d) => {
            let at = child_path(&action_node, "timeout");
            match cx.keep(cx.duration(&at, d)) {
                Some(t) if t.is_zero() => {
                    cx.report(cx.error(
                        ConfigErrorKind::Invalid,
                        &at,
                        format!("{at}: must be more than 0"),
                    ));
                    ok = false;
                    DEFAULT_HOOK_TIMEOUT
                }
                Some(t) => t,
                None => {
                    ok = false;
                    DEFAULT_HOOK_TIMEOUT
                }
            }
        }
    };
    let action = match (raw.action.mcp_tool, raw.action.command) {
        (Some(call), None) => mcp_tool(cx, &child_path(&action_node, "mcp_tool"), call, known),
        (None, Some(argv)) => command(cx, &child_path(&action_node, "command"), argv, base),
        (Some(_), Some(_)) | (None, None) => {
            cx.report(cx.error(
                ConfigErrorKind::Invalid,
                &action_node,
                format!("{action_node}: give one of `mcp_tool` or `command`"),
            ));
            None
        }
    };
    let action = action?;
    ok.then_some(HookConfig {
        event,
        matches,
        action,
        timeout,
    })
}

fn mcp_tool(cx: &Context<'_>, node: &str, raw: RawMcpTool, known: &[String]) -> Option<HookAction> {
    let mut ok = true;
    let server_node = child_path(node, "server");
    let server = cx.keep(cx.expand(&server_node, &raw.server));
    if let Some(name) = &server {
        if !known.contains(name) {
            cx.report(cx.error(
                ConfigErrorKind::Invalid,
                &server_node,
                format!(
                    "{server_node}: unknown server {name:?} ({})",
                    configured(known)
                ),
            ));
            ok = false;
        }
    }
    let tool_node = child_path(node, "tool");
    let tool = cx.keep(cx.expand(&tool_node, &raw.tool));
    if tool.as_deref().is_some_and(|t| t.trim().is_empty()) {
        cx.report(cx.error(
            ConfigErrorKind::Invalid,
            &tool_node,
            format!("{tool_node} must not be empty"),
        ));
        ok = false;
    }
    let args_node = child_path(node, "arguments");
    let mut arguments = Map::new();
    for (key, value) in raw.arguments.unwrap_or_default() {
        let Some(key) = key.as_str().map(str::to_string) else {
            continue;
        };
        let at = child_path(&args_node, &key);
        match serde_json::to_value(&value) {
            Ok(value) => match expand_strings(cx, &at, value) {
                Some(value) => {
                    arguments.insert(key, value);
                }
                None => ok = false,
            },
            Err(e) => {
                cx.report(cx.error(
                    ConfigErrorKind::Invalid,
                    &at,
                    format!("{at}: not a plain value: {e}"),
                ));
                ok = false;
            }
        }
    }
    match (ok, server, tool) {
        (true, Some(server), Some(tool)) => Some(HookAction::McpTool {
            server,
            tool,
            arguments,
        }),
        _ => None,
    }
}

/// `${VAR}` expanded in every string inside `value` (templates `{{…}}` are left for the run).
fn expand_strings(cx: &Context<'_>, node: &str, value: Value) -> Option<Value> {
    match value {
        Value::String(s) => cx.keep(cx.expand(node, &s)).map(Value::String),
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, v)| expand_strings(cx, &index_path(node, i), v))
            .collect::<Option<Vec<_>>>()
            .map(Value::Array),
        Value::Object(map) => map
            .into_iter()
            .map(|(k, v)| {
                let at = child_path(node, &k);
                expand_strings(cx, &at, v).map(|v| (k, v))
            })
            .collect::<Option<Map<_, _>>>()
            .map(Value::Object),
        other @ (Value::Null | Value::Bool(_) | Value::Number(_)) => Some(other),
    }
}

fn command(cx: &Context<'_>, node: &str, raw: Vec<String>, base: &Path) -> Option<HookAction> {
    let argv: Vec<String> = raw
        .iter()
        .enumerate()
        .map(|(i, arg)| cx.keep(cx.expand(&index_path(node, i), arg)))
        .collect::<Option<_>>()?;
    let Some(program) = argv.first().filter(|p| !p.trim().is_empty()) else {
        cx.report(cx.error(
            ConfigErrorKind::Invalid,
            node,
            format!("{node}: give the program to run and its arguments, e.g. [./hooks/guard.sh, --strict]"),
        ));
        return None;
    };
    // A relative path with a slash is the config folder's, like a server's `cwd`; a bare name
    // is looked up on PATH.
    let program = if program.contains('/') {
        relative_to(base, Path::new(program))
            .to_string_lossy()
            .into_owned()
    } else {
        program.clone()
    };
    let mut argv = argv;
    argv[0] = program;
    Some(HookAction::Command {
        argv,
        cwd: base.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::config::{load_str, Config, ConfigError};

    fn load(text: &str) -> Result<Config, ConfigError> {
        load_str(Path::new("/etc/aimon/cfg.yaml"), text, &|name| {
            (name == "TOKEN").then(|| "s3cret".to_string())
        })
    }

    const SERVERS: &str =
        "mcp:\n  servers:\n    - {name: notes, command: x}\n    - {name: guard, command: y}\n";

    #[test]
    fn hooks_load_with_their_actions() {
        let text = format!(
            "{SERVERS}hooks:
  - event: pre_tool_use
    match: {{tool: \"mcp__notes__delete_*\", server: notes}}
    action:
      mcp_tool:
        server: guard
        tool: check
        arguments: {{name: \"{{{{tool.name}}}}\", args: \"{{{{arguments}}}}\", n: 3, key: \"${{TOKEN}}\", deep: [\"{{{{prompt}}}}\"]}}
      timeout: 2s
  - event: server_failed
    action: {{command: [./hooks/alert.sh, --loud]}}
  - event: turn_end
    action: {{command: [logger, turn]}}
"
        );
        let config = load(&text).expect("loads");
        let [check, alert, logger] = config.hooks.as_slice() else {
            panic!("three hooks: {:?}", config.hooks);
        };
        assert_eq!(check.event, HookEvent::PreToolUse);
        assert_eq!(check.matches.server.as_deref(), Some("notes"));
        assert_eq!(check.timeout, Duration::from_secs(2));
        assert_eq!(
            check.action,
            HookAction::McpTool {
                server: "guard".into(),
                tool: "check".into(),
                arguments: json!({"name": "{{tool.name}}", "args": "{{arguments}}", "n": 3, "key": "s3cret", "deep": ["{{prompt}}"]})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            }
        );
        assert_eq!(check.action.describe(), "mcp_tool guard/check");
        assert_eq!(alert.timeout, DEFAULT_HOOK_TIMEOUT);
        assert_eq!(
            alert.action,
            HookAction::Command {
                argv: vec!["/etc/aimon/hooks/alert.sh".into(), "--loud".into()],
                cwd: "/etc/aimon".into(),
            }
        );
        assert!(matches!(&logger.action, HookAction::Command { argv, .. } if argv[0] == "logger"));
    }

    #[test]
    fn bad_hooks_are_located_errors() {
        let cases = [
            (
                "hooks:\n  - {event: pre_tool_use, action: {}}\n".to_string(),
                "2:35: hooks[0].action: give one of `mcp_tool` or `command`",
            ),
            (
                "hooks:\n  - {event: pre_tool_use, action: {command: [a], mcp_tool: {server: s, tool: t}}}\n".to_string(),
                "2:35: hooks[0].action: give one of `mcp_tool` or `command`",
            ),
            (
                format!("{SERVERS}hooks:\n  - {{event: session_start, match: {{tool: x}}, action: {{command: [a]}}}}\n"),
                "6:42: hooks[0].match.tool: a session_start hook has no tool to match (match.tool is for pre_tool_use and post_tool_use, match.server for those and server_ready, server_failed)",
            ),
            (
                format!("{SERVERS}hooks:\n  - {{event: pre_tool_use, action: {{command: []}}}}\n"),
                "6:45: hooks[0].action.command: give the program to run and its arguments, e.g. [./hooks/guard.sh, --strict]",
            ),
            (
                format!("{SERVERS}hooks:\n  - {{event: pre_tool_use, action: {{command: [a], timeout: 0s}}}}\n"),
                "6:59: hooks[0].action.timeout: must be more than 0",
            ),
            (
                format!("{SERVERS}hooks:\n  - {{event: pre_tool_uses, action: {{command: [a]}}}}\n"),
                "6:13: hooks[0].event: unknown value `pre_tool_uses` (did you mean `pre_tool_use`?), expected one of `pre_tool_use`, `post_tool_use`, `user_prompt`, `session_start`, `server_ready`, `server_failed`, `turn_end`",
            ),
            (
                format!("{SERVERS}hooks:\n  - {{event: pre_tool_use, action: {{mcp_tool: {{server: web, tool: t}}}}}}\n"),
                "6:55: hooks[0].action.mcp_tool.server: unknown server \"web\" (configured: guard, notes)",
            ),
            (
                format!("{SERVERS}hooks:\n  - {{event: pre_tool_use, action: {{mcp_tool: {{server: guard, tool: t, argument: {{}}}}}}}}\n"),
                "6:71: hooks[0].action.mcp_tool: unknown key `argument` (did you mean `arguments`?)",
            ),
        ];
        for (text, expected) in cases {
            let err = load(&text).expect_err(&text);
            assert_eq!(
                err.to_string(),
                format!("/etc/aimon/cfg.yaml:{expected}"),
                "{text}"
            );
        }
    }
}
