//! `policy.rules`: the operator's lasting decisions about tools (`allow`, `deny`, `ask`), read
//! and checked here, and written back (the console's "always allow", a revoked rule) through
//! the comment-preserving writer. Apart from `load.rs` because the rules name servers (an
//! unknown one is a located error) and are the one part of `policy` that the console edits.
//!
//! A rule's `tool` is a glob (`*`, `?`) over the tool's name as listed (`mcp__notes__write_note`,
//! `bash`); with `server` it also matches the server's own name for the tool. How a rule
//! matches and where its decision sits among the others is the approval layer's business
//! (`approval/rules.rs`); here it is data.

use std::path::Path;

use serde::Deserialize;
use serde_yaml::Value;

use super::context::Context;
use super::error::ConfigErrorKind;
use super::spans::{child_path, index_path};
use super::write::{ConfigFile, WriteError};

/// The list every rule is in.
pub const RULES: &str = "policy.rules";

/// What a rule decides about the calls it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleDecision {
    /// Run without asking (the side-effect ceiling still holds).
    Allow,
    /// Never run.
    Deny,
    /// Ask the operator, even where the policy would run the call.
    Ask,
}

impl RuleDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleDecision::Allow => "allow",
            RuleDecision::Deny => "deny",
            RuleDecision::Ask => "ask",
        }
    }
}

/// Which tools a rule or a hook is about: a glob over the tool's name and/or a server. Both
/// `None` matches every tool (only hooks may say so; a rule needs one of them).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolPattern {
    /// A glob (`*` any run of characters, `?` one) over the listed name, and with `server`
    /// also over the server's own name for the tool.
    pub tool: Option<String>,
    /// A configured server's name: only its tools.
    pub server: Option<String>,
}

impl ToolPattern {
    /// `tool mcp__notes__*, server notes` (what is set), for messages.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(tool) = &self.tool {
            parts.push(format!("tool {tool}"));
        }
        if let Some(server) = &self.server {
            parts.push(format!("server {server}"));
        }
        if parts.is_empty() {
            "every tool".to_string()
        } else {
            parts.join(", ")
        }
    }
}

/// One entry of `policy.rules`. The first rule that matches a call decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRule {
    pub pattern: ToolPattern,
    pub decision: RuleDecision,
    /// The pin (`sha256:…`) of the tool definition the rule was written for: when the tool's
    /// server offers another definition, the rule stops applying until the operator approves the
    /// new one. Only for a rule that names one tool.
    pub pin: Option<String>,
}

impl ApprovalRule {
    /// The rule "always allow this tool" (this definition of it, when `pin` is given), as the
    /// console writes it.
    pub fn allow_tool(name: &str, pin: Option<&str>) -> ApprovalRule {
        ApprovalRule {
            pattern: ToolPattern {
                tool: Some(name.to_string()),
                server: None,
            },
            decision: RuleDecision::Allow,
            pin: pin.map(String::from),
        }
    }

    /// The rule as a YAML mapping, the way it is appended to the file.
    fn to_yaml(&self) -> Value {
        let mut map = serde_yaml::Mapping::new();
        if let Some(tool) = &self.pattern.tool {
            map.insert("tool".into(), tool.as_str().into());
        }
        if let Some(server) = &self.pattern.server {
            map.insert("server".into(), server.as_str().into());
        }
        map.insert("decision".into(), self.decision.as_str().into());
        if let Some(pin) = &self.pin {
            map.insert("pin".into(), pin.as_str().into());
        }
        Value::Mapping(map)
    }
}

/// One rule as written.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a rule mapping (tool, server, decision, pin)"
)]
pub(super) struct RawRule {
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    server: Option<String>,
    decision: RuleDecision,
    #[serde(default)]
    pin: Option<String>,
}

/// Checks the rules against the servers named in the file (`known`); each mistake is recorded
/// in `cx`, the rules without one are returned in order.
pub(super) fn approval_rules(
    cx: &Context<'_>,
    raw: Vec<RawRule>,
    known: &[String],
) -> Vec<ApprovalRule> {
    raw.into_iter()
        .enumerate()
        .filter_map(|(i, rule)| {
            let node = index_path(RULES, i);
            let pattern = tool_pattern(cx, &node, rule.tool, rule.server, known)?;
            if pattern.tool.is_none() && pattern.server.is_none() {
                cx.report(cx.error(
                    ConfigErrorKind::Invalid,
                    &node,
                    format!(
                        "{node}: a rule needs `tool` or `server` (policy.approval is for every tool)"
                    ),
                ));
                return None;
            }
            let pin = match rule.pin {
                None => None,
                Some(pin) => Some(rule_pin(cx, &node, &pattern, pin)?),
            };
            Some(ApprovalRule {
                pattern,
                decision: rule.decision,
                pin,
            })
        })
        .collect()
}

/// Whether `text` is a pin as `tool/pin.rs` writes it: `sha256:` and 64 lowercase hex digits.
pub fn is_pin(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// A rule's `pin`, checked: written as `sha256:` and 64 hex digits, on a rule that names one
/// tool (a glob matches many, and one pin cannot stand for them all).
fn rule_pin(cx: &Context<'_>, node: &str, pattern: &ToolPattern, pin: String) -> Option<String> {
    let pin_node = child_path(node, "pin");
    let one_tool = pattern
        .tool
        .as_deref()
        .is_some_and(|t| !t.contains(['*', '?']));
    let why = if !is_pin(&pin) {
        format!("{pin_node}: {pin:?} is not a pin (`sha256:` and 64 hex digits, as the console writes it)")
    } else if !one_tool {
        format!("{pin_node}: a pin is for one tool; `tool` must name it without `*` or `?`")
    } else {
        return Some(pin);
    };
    cx.report(cx.error(ConfigErrorKind::Invalid, &pin_node, why));
    None
}

/// A `{tool, server}` pair at `node` (a rule, or a hook's `match`), expanded and checked: the
/// glob is not empty and the server is one of `known`. `None` with the errors recorded.
pub(super) fn tool_pattern(
    cx: &Context<'_>,
    node: &str,
    tool: Option<String>,
    server: Option<String>,
    known: &[String],
) -> Option<ToolPattern> {
    let mut ok = true;
    let tool_node = child_path(node, "tool");
    let tool = tool.and_then(|t| {
        let t = cx.keep(cx.expand(&tool_node, &t));
        ok &= t.is_some();
        t
    });
    if tool.as_deref().is_some_and(|t| t.trim().is_empty()) {
        cx.report(cx.error(
            ConfigErrorKind::Invalid,
            &tool_node,
            format!("{tool_node} must not be empty (`*` matches every tool)"),
        ));
        ok = false;
    }
    let server_node = child_path(node, "server");
    let server = server.and_then(|s| {
        let s = cx.keep(cx.expand(&server_node, &s));
        ok &= s.is_some();
        s
    });
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
    ok.then_some(ToolPattern { tool, server })
}

/// `configured: a, b` or `no servers are configured`.
pub(super) fn configured(known: &[String]) -> String {
    let mut names: Vec<&str> = known.iter().map(String::as_str).collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        "no servers are configured".to_string()
    } else {
        format!("configured: {}", names.join(", "))
    }
}

/// Appends `rule` to `policy.rules` of the file at `path` (the list and `policy:` are created
/// when missing) and returns the new digest. A rule with a `pin` that is already in the file
/// (the same tool, server and decision, another pin or none) gets the new pin in place instead:
/// the operator approved the tool's new definition. Refuses when the file's digest is no longer
/// `expected_digest`, and writes nothing that would not load.
pub fn add_rule(path: &Path, expected_digest: u64, rule: &ApprovalRule) -> Result<u64, WriteError> {
    let mut file = ConfigFile::open(path, expected_digest)?;
    let same = |item: &Value| {
        let mut item = item.clone();
        if let Value::Mapping(map) = &mut item {
            map.remove("pin");
        }
        item == ApprovalRule {
            pin: None,
            ..rule.clone()
        }
        .to_yaml()
    };
    match (&rule.pin, file.doc().find_item(RULES, &same)) {
        (Some(pin), Some(index)) => {
            file.set(&index_path(RULES, index), "pin", &pin.as_str().into())?;
        }
        _ => {
            file.append(RULES, &rule.to_yaml(), &[])?;
        }
    }
    file.save()
}

/// Removes the rule at `policy.rules[index]` of the file at `path`, and every other entry
/// written exactly like it (a duplicate would keep deciding the same way), and returns the new
/// digest. Refuses when the file's digest is no longer `expected_digest`.
pub fn remove_rule(path: &Path, expected_digest: u64, index: usize) -> Result<u64, WriteError> {
    let mut file = ConfigFile::open(path, expected_digest)?;
    let Some(entry) = file.doc().get(&index_path(RULES, index)).cloned() else {
        return Err(WriteError::NoSuchRule {
            path: path.to_path_buf(),
            index,
        });
    };
    file.remove(RULES, &|item| *item == entry)?;
    file.save()
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::config::{digest, load_str, Config, ConfigError};

    fn load(text: &str) -> Result<Config, ConfigError> {
        load_str(Path::new("/etc/aimon/cfg.yaml"), text, &|name| {
            (name == "GUARDED").then(|| "mcp__notes__*".to_string())
        })
    }

    const SERVERS: &str = "mcp:\n  servers:\n    - {name: notes, command: x}\n";

    #[test]
    fn rules_load_in_order() {
        let text = format!(
            "{SERVERS}policy:\n  rules:\n    - {{tool: \"mcp__notes__delete_*\", decision: deny}}\n    - {{server: notes, decision: ask}}\n    - {{tool: \"${{GUARDED}}\", server: notes, decision: allow}}\n"
        );
        let config = load(&text).expect("loads");
        let rules = &config.policy.rules;
        assert_eq!(rules.len(), 3);
        assert_eq!(
            rules[0].pattern.tool.as_deref(),
            Some("mcp__notes__delete_*")
        );
        assert_eq!(rules[0].decision, RuleDecision::Deny);
        assert_eq!(rules[1].pattern.server.as_deref(), Some("notes"));
        assert_eq!(rules[1].decision, RuleDecision::Ask);
        assert_eq!(rules[2].pattern.tool.as_deref(), Some("mcp__notes__*"));
        assert_eq!(
            rules[2].pattern.describe(),
            "tool mcp__notes__*, server notes"
        );
    }

    #[test]
    fn bad_rules_are_located_errors() {
        let cases = [
            (
                format!("{SERVERS}policy:\n  rules:\n    - {{decision: allow}}\n"),
                "6:7: policy.rules[0]: a rule needs `tool` or `server` (policy.approval is for every tool)",
            ),
            (
                format!("{SERVERS}policy:\n  rules:\n    - {{server: web, decision: allow}}\n"),
                "6:16: policy.rules[0].server: unknown server \"web\" (configured: notes)",
            ),
            (
                format!("{SERVERS}policy:\n  rules:\n    - {{tool: read, decision: alow}}\n"),
                "6:30: policy.rules[0].decision: unknown value `alow` (did you mean `allow`?), expected one of `allow`, `deny`, `ask`",
            ),
            (
                format!("{SERVERS}policy:\n  rules:\n    - {{tool: \" \", decision: deny}}\n"),
                "6:14: policy.rules[0].tool must not be empty (`*` matches every tool)",
            ),
            (
                format!("{SERVERS}policy:\n  rules:\n    - {{tool: read}}\n"),
                "6:7: policy.rules[0]: missing `decision`",
            ),
            (
                format!("{SERVERS}policy:\n  rule:\n    - {{tool: read, decision: deny}}\n"),
                "5:3: policy: unknown key `rule` (did you mean `rules`?)",
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

    fn file_with(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("aimon.yaml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn a_rule_is_appended_and_removed_keeping_the_rest() {
        let text = "# top\nmcp:\n  servers: []  # none\npolicy:\n  approval: ask_all  # keep\n";
        let (_dir, path) = file_with(text);
        let d = add_rule(&path, digest(text), &ApprovalRule::allow_tool("bash", None)).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            written,
            format!("{text}  rules:\n    - tool: bash\n      decision: allow\n")
        );
        let loaded = load_str(&path, &written, &|_| None).unwrap();
        assert_eq!(
            loaded.policy.rules,
            vec![ApprovalRule::allow_tool("bash", None)]
        );
        // A second one goes after it; removing the first keeps the second.
        let d = add_rule(&path, d, &ApprovalRule::allow_tool("read", None)).unwrap();
        let d = remove_rule(&path, d, 0).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            written,
            format!("{text}  rules:\n    - tool: read\n      decision: allow\n")
        );
        assert!(matches!(
            remove_rule(&path, d, 5),
            Err(WriteError::NoSuchRule { index: 5, .. })
        ));
        // The last one leaves an empty list behind, which loads.
        remove_rule(&path, d, 0).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(written, format!("{text}  rules: []\n"));
        assert!(load_str(&path, &written, &|_| None).is_ok());
    }

    #[test]
    fn an_always_rule_carries_its_pin_and_a_new_pin_replaces_the_old_in_place() {
        let (p1, p2) = (
            format!("sha256:{}", "a".repeat(64)),
            format!("sha256:{}", "b".repeat(64)),
        );
        let text = "policy:\n  rules:\n    - {tool: read, decision: deny}  # keep\n";
        let (_dir, path) = file_with(text);
        let rule = |pin: &str| ApprovalRule::allow_tool("bash", Some(pin));
        let d = add_rule(&path, digest(text), &rule(&p1)).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            written,
            format!("{text}    - {{tool: bash, decision: allow, pin: {p1}}}\n")
        );
        add_rule(&path, d, &rule(&p2)).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            written,
            format!("{text}    - {{tool: bash, decision: allow, pin: {p2}}}\n")
        );
        let loaded = load_str(&path, &written, &|_| None).unwrap();
        assert_eq!(loaded.policy.rules[1], rule(&p2));
        // A pin must be one, and on a rule that names one tool.
        for (rule, expected) in [
            (
                "{tool: bash, decision: allow, pin: abc}",
                "cfg.yaml:3:42: policy.rules[0].pin: \"abc\" is not a pin",
            ),
            (
                &format!("{{tool: \"mcp__*\", decision: allow, pin: {p1}}}"),
                "cfg.yaml:3:46: policy.rules[0].pin: a pin is for one tool",
            ),
        ] {
            let text = format!("policy:\n  rules:\n    - {rule}\n");
            let err = load(&text).expect_err(&text).to_string();
            assert!(err.contains(expected), "{err}");
        }
    }

    #[test]
    fn duplicates_go_together_and_a_changed_file_is_refused() {
        let text = "policy:\n  rules:\n    - {tool: bash, decision: allow}\n    - {tool: read, decision: deny}\n    - {tool: bash, decision: allow}\n";
        let (_dir, path) = file_with(text);
        assert!(matches!(
            remove_rule(&path, digest(text) ^ 1, 0),
            Err(WriteError::Changed { .. })
        ));
        remove_rule(&path, digest(text), 2).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            written,
            "policy:\n  rules:\n    - {tool: read, decision: deny}\n"
        );
    }
}
