//! What lets tools run without a question, as JSON for a daemon's consoles (`ledger`,
//! docs/daemon.md): the rules of the config file (`policy.rules`, each as written) and the
//! approvals the operator gave for the session (`a`), each with its descriptor's fingerprint.

use serde_json::{json, Value};

use crate::approval::ApprovalGate;
use crate::config::{ApprovalRule, RuleDecision, ToolPattern};

/// A rule: `{tool, server, decision, pin}` (`null` where the rule does not say).
pub fn rule_json(rule: &ApprovalRule) -> Value {
    json!({
        "tool": rule.pattern.tool,
        "server": rule.pattern.server,
        "decision": rule.decision.as_str(),
        "pin": rule.pin,
    })
}

/// The rule [`rule_json`] wrote.
pub fn rule_from_json(v: &Value) -> Option<ApprovalRule> {
    let text = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let decision: RuleDecision = serde_json::from_value(v.get("decision")?.clone()).ok()?;
    Some(ApprovalRule {
        pattern: ToolPattern {
            tool: text("tool"),
            server: text("server"),
        },
        decision,
        pin: text("pin"),
    })
}

/// `{rules, session}`: the gate's rules in order (a rule's index is its place in
/// `policy.rules`), and its session approvals as `{tool, fingerprint}`.
pub fn ledger_json(gate: &ApprovalGate) -> Value {
    let rules: Vec<Value> = gate.rules().iter().map(rule_json).collect();
    let session: Vec<Value> = gate
        .ledger()
        .iter()
        .map(|e| json!({"tool": e.tool_name, "fingerprint": e.fingerprint.short()}))
        .collect();
    json!({"rules": rules, "session": session})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_comes_back_as_it_was_written() {
        let rules = [
            ApprovalRule::allow_tool("mcp__notes__write_note", Some("sha256:ab")),
            ApprovalRule {
                pattern: ToolPattern {
                    tool: Some("mcp__notes__delete_*".into()),
                    server: Some("notes".into()),
                },
                decision: RuleDecision::Deny,
                pin: None,
            },
        ];
        for rule in rules {
            assert_eq!(rule_from_json(&rule_json(&rule)), Some(rule));
        }
        assert_eq!(rule_from_json(&json!({"decision": "maybe"})), None);
    }
}
