//! How `policy.rules` and the `match` of hooks select tools (a glob over the listed name, a
//! server), and what a `pre_tool_use` hook can say to the gate. Apart from `gate.rs` because the
//! runtime's hook runner matches tools the same way, and because matching is the one place that
//! reads a descriptor's name and origin: display data that decisions never read for *trust*
//! (docs/ARCHITECTURE.md §1). A rule naming a tool is the operator's explicit choice, not trust.

use crate::config::{ApprovalRule, ToolPattern};
use crate::tool::ToolDescriptor;

/// Whether `text` matches `pattern`: `*` is any run of characters (none included), `?` one
/// character, everything else itself.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // Where the last `*` was, and the text position it is currently taken to reach.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                // Let the last `*` take one more character and try again from there.
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Whether `tool` is one the pattern is about: of `server` (when given; a local tool has no
/// server), and with a name that matches the `tool` glob (when given) as listed or, with a
/// server given, as that server names it.
pub fn pattern_matches(pattern: &ToolPattern, tool: &ToolDescriptor) -> bool {
    let origin = tool.origin.as_ref();
    if let Some(server) = &pattern.server {
        if origin.is_none_or(|o| &o.server != server) {
            return false;
        }
    }
    match &pattern.tool {
        None => true,
        Some(glob) => {
            glob_matches(glob, &tool.name)
                || (pattern.server.is_some() && origin.is_some_and(|o| glob_matches(glob, &o.tool)))
        }
    }
}

/// Whether a pattern without a tool is about `server` (the server events' `match`).
pub fn server_matches(pattern: &ToolPattern, server: &str) -> bool {
    pattern.server.as_deref().is_none_or(|s| s == server)
}

/// The first rule that matches `tool`, with its index in `policy.rules`.
pub fn first_rule<'a>(
    rules: &'a [ApprovalRule],
    tool: &ToolDescriptor,
) -> Option<(usize, &'a ApprovalRule)> {
    rules
        .iter()
        .enumerate()
        .find(|(_, rule)| pattern_matches(&rule.pattern, tool))
}

/// `policy.rules[1] (tool mcp__notes__*)`: how a rule is named to the operator.
pub fn rule_label(index: usize, rule: &ApprovalRule) -> String {
    format!("policy.rules[{index}] ({})", rule.pattern.describe())
}

/// What a `pre_tool_use` hook said that the gate takes into account (a hook that deferred or
/// said nothing says nothing here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookVerdict {
    /// Run without asking (never past the side-effect ceiling).
    Allow,
    /// Do not run.
    Deny,
}

/// A hook's verdict, which hook gave it and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookDecision {
    pub verdict: HookVerdict,
    /// The hook, in words: `hooks[0] (mcp_tool guard/check)`.
    pub by: String,
    /// The hook's reason, when it gave one.
    pub reason: Option<String>,
}

impl HookDecision {
    /// `hooks[0] (mcp_tool guard/check): no deleting on fridays`.
    pub fn describe(&self) -> String {
        match &self.reason {
            Some(reason) => format!("{}: {reason}", self.by),
            None => self.by.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AnnotationTrust, RuleDecision};
    use crate::tool::{DestructiveBehavior, SideEffectLevel, ToolOrigin};
    use serde_json::json;

    fn remote(server: &str, tool: &str) -> ToolDescriptor {
        ToolDescriptor {
            pin: None,
            name: format!("mcp__{server}__{tool}"),
            description: String::new(),
            input_schema: json!({}).into(),
            side_effect: SideEffectLevel::Mutating,
            destructive: DestructiveBehavior::Destructive,
            provenance: String::new(),
            flags: Vec::new(),
            origin: Some(ToolOrigin {
                title: None,
                output_schema: None,
                server: server.into(),
                tool: tool.into(),
                trust: AnnotationTrust::Ignore,
                annotations: None,
            }),
        }
    }

    fn local(name: &str) -> ToolDescriptor {
        ToolDescriptor {
            flags: Vec::new(),
            origin: None,
            name: name.into(),
            ..remote("x", name)
        }
    }

    fn pattern(tool: Option<&str>, server: Option<&str>) -> ToolPattern {
        ToolPattern {
            tool: tool.map(String::from),
            server: server.map(String::from),
        }
    }

    #[test]
    fn globs() {
        for (p, t, expected) in [
            ("*", "", true),
            ("*", "anything", true),
            ("mcp__notes__*", "mcp__notes__write_note", true),
            ("mcp__notes__*", "mcp__notes-2__write_note", false),
            ("mcp__*__delete_*", "mcp__a__delete_note", true),
            ("mcp__*__delete_*", "mcp__a__undelete", false),
            ("?ash", "bash", true),
            ("?ash", "ash", false),
            ("a*b*c", "aXbYbZc", true),
            ("a*b*c", "aXbYbZ", false),
            ("exact", "exact", true),
            ("exact", "exactly", false),
            ("**", "x", true),
            ("é*", "été", true),
        ] {
            assert_eq!(glob_matches(p, t), expected, "{p} on {t}");
        }
    }

    #[test]
    fn patterns_select_by_name_and_server() {
        let write = remote("notes", "write_note");
        let bash = local("bash");
        assert!(pattern_matches(&pattern(None, None), &bash));
        assert!(pattern_matches(&pattern(Some("bash"), None), &bash));
        assert!(!pattern_matches(
            &pattern(Some("bash"), Some("notes")),
            &bash
        ));
        assert!(pattern_matches(&pattern(None, Some("notes")), &write));
        assert!(!pattern_matches(&pattern(None, Some("web")), &write));
        // The server's own name counts only when the server is pinned.
        assert!(!pattern_matches(&pattern(Some("write_*"), None), &write));
        assert!(pattern_matches(
            &pattern(Some("write_*"), Some("notes")),
            &write
        ));
        assert!(pattern_matches(
            &pattern(Some("mcp__notes__*"), Some("notes")),
            &write
        ));
        assert!(server_matches(&pattern(None, None), "notes"));
        assert!(server_matches(&pattern(None, Some("notes")), "notes"));
        assert!(!server_matches(&pattern(None, Some("web")), "notes"));
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let rules = vec![
            ApprovalRule {
                pin: None,
                pattern: pattern(Some("mcp__notes__delete_*"), None),
                decision: RuleDecision::Deny,
            },
            ApprovalRule {
                pin: None,
                pattern: pattern(None, Some("notes")),
                decision: RuleDecision::Allow,
            },
        ];
        let (i, rule) = first_rule(&rules, &remote("notes", "delete_note")).unwrap();
        assert_eq!((i, rule.decision), (0, RuleDecision::Deny));
        let (i, rule) = first_rule(&rules, &remote("notes", "write_note")).unwrap();
        assert_eq!((i, rule.decision), (1, RuleDecision::Allow));
        assert!(first_rule(&rules, &local("bash")).is_none());
        assert_eq!(
            rule_label(0, &rules[0]),
            "policy.rules[0] (tool mcp__notes__delete_*)"
        );
    }
}
