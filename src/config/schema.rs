//! The shape of the config file: which keys exist at each place and what kind of value each
//! takes. Checked over the parsed document before the typed decoding, so that every unknown key
//! and every wrong type in the file is reported at once, each at its own line and column, and an
//! unknown key or value is answered with the nearest valid one ("did you mean `args`?").
//!
//! serde stops at the first mistake and knows no spelling; this walk is why loading can say
//! everything that is wrong in one go. The semantic checks (names, durations, transports,
//! variables) come after it, in `load.rs`.

use std::path::Path;

use serde_yaml::Value;

use super::context::position_of;
use super::edit::kind;
use super::error::{ConfigError, ConfigErrorKind};
use super::spans::{child_path, index_path, Spans};

/// What a value must be.
#[derive(Clone, Copy)]
pub(super) enum Shape {
    Str,
    Bool,
    /// `10s`, `500ms`, or a bare number of seconds.
    Duration,
    /// A whole number, this or more (the minimum is checked with the other values, after the
    /// shape; here it only words what is expected).
    Count(u64),
    /// Any number, whole or not.
    Number,
    /// One of these words.
    Enum(&'static [&'static str]),
    List(&'static Shape),
    /// A mapping of strings to strings (`env`, `headers`).
    StrMap,
    /// A mapping of strings to any value (a rewake rule's `match`).
    AnyMap,
    /// A mapping of names (any) to values of one shape (`agent.models`).
    Named(&'static Shape),
    Map(&'static [Field]),
}

/// One key of a mapping.
#[derive(Clone, Copy)]
pub(super) struct Field {
    key: &'static str,
    shape: Shape,
    required: bool,
}

const fn opt(key: &'static str, shape: Shape) -> Field {
    Field {
        key,
        shape,
        required: false,
    }
}

const fn req(key: &'static str, shape: Shape) -> Field {
    Field {
        key,
        shape,
        required: true,
    }
}

static STR: Shape = Shape::Str;

/// The local tools a config may list.
pub(super) const LOCAL_TOOLS: &[&str] = &["read", "bash"];
static LOCAL_TOOL: Shape = Shape::Enum(LOCAL_TOOLS);

static OAUTH_IDP_FIELDS: [Field; 5] = [
    req("issuer", Shape::Str),
    req("token_endpoint", Shape::Str),
    req("client_id", Shape::Str),
    opt("client_secret", Shape::Str),
    req("id_token", Shape::Str),
];

static OAUTH_FIELDS: [Field; 11] = [
    opt("client_id", Shape::Str),
    opt("client_secret", Shape::Str),
    opt("scopes", Shape::List(&STR)),
    opt(
        "grant",
        Shape::Enum(&[
            "authorization_code",
            "client_credentials",
            "cross_app_access",
            "workload_identity",
        ]),
    ),
    opt("key_file", Shape::Str),
    opt("private_key", Shape::Str),
    opt(
        "signing_algorithm",
        Shape::Enum(&["ES256", "ES384", "RS256"]),
    ),
    opt("client_metadata_url", Shape::Str),
    opt("idp", Shape::Map(&OAUTH_IDP_FIELDS)),
    opt("assertion", Shape::Str),
    opt("assertion_file", Shape::Str),
];

static SANDBOX_FIELDS: [Field; 4] = [
    opt("read", Shape::List(&STR)),
    opt("write", Shape::List(&STR)),
    opt("network", Shape::Bool),
    opt("required", Shape::Bool),
];
static SANDBOX: Shape = Shape::Map(&SANDBOX_FIELDS);

static SERVER_FIELDS: [Field; 17] = [
    req("name", Shape::Str),
    opt(
        "transport",
        Shape::Enum(&["stdio", "streamable_http", "sse"]),
    ),
    opt("command", Shape::Str),
    opt("args", Shape::List(&STR)),
    opt("env", Shape::StrMap),
    opt("cwd", Shape::Str),
    opt("url", Shape::Str),
    opt("headers", Shape::StrMap),
    opt("bearer_token", Shape::Str),
    opt("oauth", Shape::Map(&OAUTH_FIELDS)),
    opt("request_timeout", Shape::Duration),
    opt("annotation_trust", Shape::Enum(&["ignore", "trust"])),
    opt("restart", Shape::Enum(&["never", "on_failure"])),
    opt("start", Shape::Enum(&["eager", "lazy"])),
    opt("enabled", Shape::Bool),
    opt("roots", Shape::List(&STR)),
    opt("sandbox", SANDBOX),
];
static SERVER: Shape = Shape::Map(&SERVER_FIELDS);

static MCP_FIELDS: [Field; 4] = [
    opt("startup_budget", Shape::Duration),
    opt("max_concurrent_starts", Shape::Count(1)),
    opt("roots", Shape::List(&STR)),
    opt("servers", Shape::List(&SERVER)),
];

static RULE_FIELDS: [Field; 4] = [
    opt("tool", Shape::Str),
    opt("server", Shape::Str),
    req("decision", Shape::Enum(&["allow", "deny", "ask"])),
    opt("pin", Shape::Str),
];
static RULE: Shape = Shape::Map(&RULE_FIELDS);

static POLICY_FIELDS: [Field; 6] = [
    opt(
        "side_effect_ceiling",
        Shape::Enum(&["read_only", "mutating"]),
    ),
    opt(
        "approval",
        Shape::Enum(&["ask_mutating", "ask_all", "never"]),
    ),
    opt("local_tools", Shape::List(&LOCAL_TOOL)),
    opt("rules", Shape::List(&RULE)),
    opt("flagged", Shape::Enum(&["ask", "deny"])),
    opt("bash_sandbox", SANDBOX),
];

static REWAKE_FIELDS: [Field; 4] = [
    req("server", Shape::Str),
    req("method", Shape::Str),
    opt("match", Shape::AnyMap),
    req("event", Shape::Str),
];
static REWAKE: Shape = Shape::Map(&REWAKE_FIELDS);

static NOTIFICATIONS_FIELDS: [Field; 1] = [opt("rewake", Shape::List(&REWAKE))];

static MATCH_FIELDS: [Field; 2] = [opt("tool", Shape::Str), opt("server", Shape::Str)];

static MCP_TOOL_FIELDS: [Field; 3] = [
    req("server", Shape::Str),
    req("tool", Shape::Str),
    opt("arguments", Shape::AnyMap),
];

static ACTION_FIELDS: [Field; 3] = [
    opt("mcp_tool", Shape::Map(&MCP_TOOL_FIELDS)),
    opt("command", Shape::List(&STR)),
    opt("timeout", Shape::Duration),
];

static HOOK_FIELDS: [Field; 3] = [
    req("event", Shape::Enum(crate::config::HookEvent::NAMES)),
    opt("match", Shape::Map(&MATCH_FIELDS)),
    req("action", Shape::Map(&ACTION_FIELDS)),
];
static HOOK: Shape = Shape::Map(&HOOK_FIELDS);

/// One model profile: an entry of `agent.models`, or the whole `agent:` written inline.
const PROFILE_FIELDS: [Field; 18] = [
    opt("base_url", Shape::Str),
    opt("command", Shape::Str),
    opt("args", Shape::List(&STR)),
    opt("env", Shape::StrMap),
    opt("cwd", Shape::Str),
    opt("model", Shape::Str),
    opt(
        "provider",
        Shape::Enum(&crate::config::ModelProvider::NAMES),
    ),
    opt("api_key", Shape::Str),
    opt("headers", Shape::StrMap),
    opt("system_prompt", Shape::Str),
    opt("max_turns", Shape::Count(1)),
    opt("request_timeout", Shape::Duration),
    opt("stream", Shape::Bool),
    opt("temperature", Shape::Number),
    opt("max_tokens", Shape::Count(1)),
    opt("context_window", Shape::Count(1)),
    opt("max_result_tokens", Shape::Count(1)),
    opt("tool_search", Shape::Str),
];
static PROFILE: Shape = Shape::Map(&PROFILE_FIELDS);

/// `agent:`: `models` (named profiles) and `default`, then the keys of one profile (inline, or
/// shared by every profile of `models`).
static AGENT_FIELDS: [Field; 20] = {
    let mut fields = [opt("default", Shape::Str); 20];
    fields[1] = opt("models", Shape::Named(&PROFILE));
    let mut i = 0;
    while i < PROFILE_FIELDS.len() {
        fields[i + 2] = PROFILE_FIELDS[i];
        i += 1;
    }
    fields
};

static GATEWAY_FIELDS: [Field; 4] = [
    opt("unattended", Shape::Enum(&["refuse", "rules"])),
    opt("listen", Shape::Str),
    opt("naming", Shape::Str),
    opt("max_calls_per_host", Shape::Count(1)),
];

static TELEMETRY_FIELDS: [Field; 3] = [
    opt("otlp_endpoint", Shape::Str),
    opt("headers", Shape::StrMap),
    opt("include_payloads", Shape::Bool),
];

static DAEMON_FIELDS: [Field; 4] = [
    opt("listen", Shape::Str),
    opt("tls_cert", Shape::Str),
    opt("tls_key", Shape::Str),
    opt("sessions", Shape::Count(1)),
];

static ROOT_FIELDS: [Field; 8] = [
    opt("mcp", Shape::Map(&MCP_FIELDS)),
    opt("policy", Shape::Map(&POLICY_FIELDS)),
    opt("notifications", Shape::Map(&NOTIFICATIONS_FIELDS)),
    opt("hooks", Shape::List(&HOOK)),
    opt("agent", Shape::Map(&AGENT_FIELDS)),
    opt("gateway", Shape::Map(&GATEWAY_FIELDS)),
    opt("telemetry", Shape::Map(&TELEMETRY_FIELDS)),
    opt("daemon", Shape::Map(&DAEMON_FIELDS)),
];

/// Every place in `value` (the whole file, parsed) that does not have the config's shape.
pub(super) fn check(value: &Value, spans: &Spans, path: &Path) -> Vec<ConfigError> {
    let mut walk = Walk {
        spans,
        path,
        errors: Vec::new(),
    };
    walk.map(value, &ROOT_FIELDS, "");
    walk.errors
}

struct Walk<'a> {
    spans: &'a Spans,
    path: &'a Path,
    errors: Vec<ConfigError>,
}

/// What a message about `node` starts with: `mcp.servers[0]: `, nothing for the root.
fn prefix(node: &str) -> String {
    if node.is_empty() {
        String::new()
    } else {
        format!("{node}: ")
    }
}

/// The names of `fields`, each in backquotes, joined.
fn names(words: impl Iterator<Item = &'static str>) -> String {
    words
        .map(|w| format!("`{w}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Walk<'_> {
    fn error(&mut self, node: &str, at_key: bool, message: String) {
        let at = match (at_key, self.spans.key(node)) {
            (true, Some(key)) => key,
            _ => position_of(self.spans, node),
        };
        self.errors.push(ConfigError::at(
            ConfigErrorKind::Schema,
            self.path,
            at,
            message,
        ));
    }

    fn value(&mut self, value: &Value, shape: &Shape, node: &str) {
        if let Value::Tagged(tagged) = value {
            self.error(
                node,
                false,
                format!(
                    "{}YAML tags ({}) are not used in this file",
                    prefix(node),
                    tagged.tag
                ),
            );
            return;
        }
        match shape {
            Shape::Str => self.string(value, node),
            Shape::Bool => {
                if !matches!(value, Value::Bool(_)) {
                    self.wrong(value, node, "true or false");
                }
            }
            Shape::Duration => {
                if !matches!(value, Value::String(_) | Value::Number(_)) {
                    self.wrong(value, node, "a duration such as 500ms, 10s, 2m or 1h");
                }
            }
            Shape::Count(min) => {
                let expected = format!("a whole number, {min} or more");
                match value {
                    Value::Number(n) if n.as_u64().is_some() => {}
                    // `-5` or `2.5` is "a number" too: say which.
                    Value::Number(n) => self.error(
                        node,
                        false,
                        format!("{}expected {expected}, got {n}", prefix(node)),
                    ),
                    other => self.wrong(other, node, &expected),
                }
            }
            Shape::Number => {
                if !matches!(value, Value::Number(_)) {
                    self.wrong(value, node, "a number");
                }
            }
            Shape::Enum(words) => match value {
                Value::String(s) if words.contains(&s.as_str()) => {}
                Value::String(s) => {
                    let hint = suggest(s, words.iter().copied())
                        .map(|w| format!(" (did you mean {w}?)"))
                        .unwrap_or_default();
                    self.error(
                        node,
                        false,
                        format!(
                            "{}unknown value `{s}`{hint}, expected one of {}",
                            prefix(node),
                            names(words.iter().copied())
                        ),
                    );
                }
                other => {
                    let expected = format!("one of {}", names(words.iter().copied()));
                    self.wrong(other, node, &expected);
                }
            },
            Shape::List(item) => match value {
                Value::Null => {}
                Value::Sequence(items) => {
                    for (i, v) in items.iter().enumerate() {
                        self.value(v, item, &index_path(node, i));
                    }
                }
                other => self.wrong(other, node, "a list"),
            },
            Shape::StrMap | Shape::AnyMap => match value {
                Value::Null => {}
                Value::Mapping(map) => {
                    for (k, v) in map {
                        let Some(key) = self.key(k, node) else {
                            continue;
                        };
                        if matches!(shape, Shape::StrMap) {
                            self.string(v, &child_path(node, &key));
                        }
                    }
                }
                other => self.wrong(other, node, "a mapping"),
            },
            Shape::Named(item) => match value {
                Value::Null => {}
                Value::Mapping(map) => {
                    for (k, v) in map {
                        if let Some(key) = self.key(k, node) {
                            self.value(v, item, &child_path(node, &key));
                        }
                    }
                }
                other => self.wrong(other, node, "a mapping of names"),
            },
            Shape::Map(fields) => self.map(value, fields, node),
        }
    }

    /// A string; a number or true/false is taken as its text, as written.
    fn string(&mut self, value: &Value, node: &str) {
        match value {
            Value::String(_) | Value::Number(_) | Value::Bool(_) => {}
            other => self.wrong(other, node, "a string"),
        }
    }

    fn wrong(&mut self, value: &Value, node: &str, expected: &str) {
        // `max_turns: ${N}`: numbers and true/false are taken as written, never expanded.
        let hint = match value {
            Value::String(s) if s.contains("${") => {
                " (`${VAR}` is expanded in strings and durations, not here)"
            }
            _ => "",
        };
        self.error(
            node,
            false,
            format!(
                "{}expected {expected}, got {}{hint}",
                prefix(node),
                kind(value)
            ),
        );
    }

    /// A mapping key as text; a key that is not a scalar is an error.
    fn key(&mut self, k: &Value, node: &str) -> Option<String> {
        match k {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Null | Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => {
                self.error(
                    node,
                    false,
                    format!("{}a key must be plain text", prefix(node)),
                );
                None
            }
        }
    }

    fn map(&mut self, value: &Value, fields: &'static [Field], node: &str) {
        let map = match value {
            Value::Mapping(map) => map,
            // An empty section is an empty mapping, unless something in it is required.
            Value::Null if fields.iter().all(|f| !f.required) => return,
            other => {
                let expected = format!("a mapping with {}", names(fields.iter().map(|f| f.key)));
                self.wrong(other, node, &expected);
                return;
            }
        };
        for (k, v) in map {
            let Some(key) = self.key(k, node) else {
                continue;
            };
            let child = child_path(node, &key);
            match fields.iter().find(|f| f.key == key) {
                Some(field) if field.required || !v.is_null() => {
                    self.value(v, &field.shape, &child)
                }
                Some(_) => {}
                None => {
                    let valid = fields.iter().map(|f| f.key);
                    let message = match suggest(&key, valid.clone()) {
                        Some(near) => {
                            format!("{}unknown key `{key}` (did you mean {near}?)", prefix(node))
                        }
                        None => format!(
                            "{}unknown key `{key}`, expected one of {}",
                            prefix(node),
                            names(valid)
                        ),
                    };
                    self.error(&child, true, message);
                }
            }
        }
        for field in fields.iter().filter(|f| f.required) {
            let present = map
                .keys()
                .any(|k| k.as_str().is_some_and(|s| s == field.key));
            if !present {
                self.error(
                    node,
                    false,
                    format!("{}missing `{}`", prefix(node), field.key),
                );
            }
        }
    }
}

/// The words among `candidates` nearest to `word` (`text::nearest`), in backquotes: one, or
/// each as near as the other (`` `model` or `models` ``).
pub(super) fn suggest(
    word: &str,
    candidates: impl Iterator<Item = &'static str>,
) -> Option<String> {
    let near = crate::text::nearest(word, candidates);
    (!near.is_empty()).then(|| {
        near.iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(" or ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_and_suggestions() {
        assert_eq!(crate::text::edit_distance("comand", "command"), 1);
        assert_eq!(crate::text::edit_distance("", "abc"), 3);
        assert_eq!(crate::text::edit_distance("kitten", "sitting"), 3);
        let keys = || SERVER_FIELDS.iter().map(|f| f.key);
        let near = |word: &str| suggest(word, keys());
        assert_eq!(near("comand").as_deref(), Some("`command`"));
        assert_eq!(near("arg").as_deref(), Some("`args`"));
        assert_eq!(near("Args").as_deref(), Some("`args`"));
        assert_eq!(
            near("request-timeout").as_deref(),
            Some("`request_timeout`")
        );
        assert_eq!(
            near("annotations_trust").as_deref(),
            Some("`annotation_trust`")
        );
        assert_eq!(near("enviroment"), None);
        assert_eq!(near("x"), None);
    }

    #[test]
    fn a_swap_is_one_edit_and_ties_are_all_named() {
        assert_eq!(crate::text::edit_distance("modle", "model"), 1);
        assert_eq!(crate::text::edit_distance("modle", "models"), 2);
        assert_eq!(crate::text::edit_distance("ab", "ba"), 1);
        assert_eq!(crate::text::edit_distance("abc", "ca"), 3);
        let agent = || AGENT_FIELDS.iter().map(|f| f.key);
        assert_eq!(suggest("modle", agent()).as_deref(), Some("`model`"));
        assert_eq!(suggest("modl", agent()).as_deref(), Some("`model`"));
        assert_eq!(
            suggest("modes", agent()).as_deref(),
            Some("`model` or `models`")
        );
    }
}
