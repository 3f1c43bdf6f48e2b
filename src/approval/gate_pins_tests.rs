//! The gate and pinned definitions (`pins.rs`): a tool whose definition changed after a rule or
//! an approval covered it asks, with the diff, until the operator approves the new one; a deny
//! still holds; a pin written in a rule holds across runs.

use super::*;
use crate::approval::{PinChange, PinState, PinStore};
use crate::config::{AnnotationTrust, ApprovalRule, RuleDecision, ToolPattern};
use crate::tool::pin::{self, DiffLine};
use crate::tool::ToolOrigin;
use serde_json::json;

/// The demo's `write_note`, read-only so that the policy alone would run it; `v2` is the rug
/// pull (another description, a `tags` argument).
fn write_note(v2: bool) -> ToolDescriptor {
    let (description, schema) = if v2 {
        (
            "Save a note, with tags.",
            json!({"type": "object", "properties": {"title": {"type": "string"}, "tags": {"type": "array"}}}),
        )
    } else {
        (
            "Save a note.",
            json!({"type": "object", "properties": {"title": {"type": "string"}}}),
        )
    };
    let mut tool = ToolDescriptor {
        name: "mcp__notes__write_note".into(),
        description: description.into(),
        input_schema: schema.into(),
        side_effect: SideEffectLevel::ReadOnly,
        destructive: DestructiveBehavior::NonDestructive,
        provenance: "readOnlyHint=true, trusted".into(),
        flags: Vec::new(),
        pin: None,
        origin: Some(ToolOrigin {
            server: "notes".into(),
            tool: "write_note".into(),
            trust: AnnotationTrust::Trust,
            annotations: None,
            title: None,
            output_schema: None,
        }),
    };
    tool.pin = pin::definition(&tool).map(|d| pin::hash(&d));
    tool
}

fn rule(decision: RuleDecision, pin: Option<&str>) -> ApprovalRule {
    ApprovalRule {
        pattern: ToolPattern {
            tool: Some("mcp__notes__write_note".into()),
            server: None,
        },
        decision,
        pin: pin.map(String::from),
    }
}

fn gate(approval: ApprovalPolicy, rules: Vec<ApprovalRule>) -> ApprovalGate {
    ApprovalGate::new(PolicyConfig {
        approval,
        rules,
        ..PolicyConfig::default()
    })
}

fn asks_as_changed(verdict: GateVerdict) {
    match verdict {
        GateVerdict::Ask { why } => assert!(why.contains("changed since approved"), "{why}"),
        other => panic!("expected a question about the change, got {other:?}"),
    }
}

#[test]
fn an_allow_rule_stops_applying_when_the_tool_changes_until_approved_again() {
    let (v1, v2) = (write_note(false), write_note(true));
    let gate = gate(
        ApprovalPolicy::AskAll,
        vec![rule(RuleDecision::Allow, None)],
    );
    // The rule pins what it first met, and allows it.
    assert!(matches!(
        gate.decide(&v1, None),
        GateVerdict::Run {
            by: RunBy::Rule,
            ..
        }
    ));
    assert!(matches!(gate.pin_state(&v1), PinState::Pinned { .. }));
    // The server swaps the definition: the rule waits for the operator.
    asks_as_changed(gate.decide(&v2, None));
    let change = gate.pin_change(&v2).expect("changed");
    assert_eq!(change.approved, v1.pin.clone().unwrap());
    assert_eq!(change.pin, v2.pin.clone().unwrap());
    assert!(change.by.starts_with("policy.rules[0]"), "{}", change.by);
    assert_eq!(change.diff[0], DiffLine::Field("description".into()));
    assert!(change
        .diff
        .contains(&DiffLine::Added("Save a note, with tags.".into())));
    // A hook's allow does not pass a changed tool either; a deny still holds.
    let allow = crate::approval::HookDecision {
        verdict: crate::approval::HookVerdict::Allow,
        by: "hooks[0]".into(),
        reason: None,
    };
    asks_as_changed(gate.decide(&v2, Some(&allow)));
    let deny = crate::approval::HookDecision {
        verdict: crate::approval::HookVerdict::Deny,
        ..allow
    };
    assert!(matches!(
        gate.decide(&v2, Some(&deny)),
        GateVerdict::Deny { .. }
    ));
    // Approving (even once) accepts the new definition: the rule applies again.
    gate.record(&v2, ApprovalDecision::AllowOnce).unwrap();
    assert!(matches!(
        gate.decide(&v2, None),
        GateVerdict::Run {
            by: RunBy::Rule,
            ..
        }
    ));
    // And going back is a change too.
    asks_as_changed(gate.decide(&v1, None));
}

#[test]
fn a_session_approval_of_a_changed_tool_asks_even_where_the_policy_would_run_it() {
    let (v1, v2) = (write_note(false), write_note(true));
    let gate = gate(ApprovalPolicy::AskMutating, Vec::new());
    // Read-only under ask_mutating: runs, and nothing pins it.
    assert!(matches!(
        gate.decide(&v1, None),
        GateVerdict::Run {
            by: RunBy::Policy,
            ..
        }
    ));
    assert_eq!(gate.pin_state(&v1), PinState::Unpinned);
    // Once only does not pin an unchanged tool; for the session does.
    gate.record(&v1, ApprovalDecision::AllowOnce).unwrap();
    assert_eq!(gate.pin_state(&v1), PinState::Unpinned);
    gate.record(&v1, ApprovalDecision::AllowForSession).unwrap();
    assert!(
        matches!(gate.pin_state(&v1), PinState::Pinned { by, .. } if by == "your approval for this session")
    );
    // Changed: it asks, though the policy alone would have run it.
    asks_as_changed(gate.decide(&v2, None));
    gate.record(&v2, ApprovalDecision::AllowForSession).unwrap();
    assert!(matches!(gate.decide(&v2, None), GateVerdict::Run { .. }));
    assert!(!gate.pin_state(&v2).is_changed());
}

#[test]
fn a_pin_written_in_a_rule_holds_across_runs_and_its_diff_comes_from_the_store() {
    let (v1, v2) = (write_note(false), write_note(true));
    let dir = tempfile::tempdir().unwrap();
    let store = PinStore::at(dir.path().to_path_buf());
    let p1 = v1.pin.clone().unwrap();
    // A run where the rule was written: the definition is kept under its pin.
    let first = gate(
        ApprovalPolicy::AskAll,
        vec![rule(RuleDecision::Allow, Some(&p1))],
    )
    .with_pin_store(store.clone());
    assert!(matches!(
        first.decide(&v1, None),
        GateVerdict::Run {
            by: RunBy::Rule,
            ..
        }
    ));
    // The next run: the server starts with the changed tool.
    let next = gate(
        ApprovalPolicy::AskAll,
        vec![rule(RuleDecision::Allow, Some(&p1))],
    )
    .with_pin_store(store);
    asks_as_changed(next.decide(&v2, None));
    let PinChange { approved, diff, .. } = next.pin_change(&v2).expect("changed");
    assert_eq!(approved, p1);
    assert!(
        diff.contains(&DiffLine::Removed("Save a note.".into())),
        "{diff:?}"
    );
    // The rule written again with the new pin (`A`): pinned, allowed.
    next.set_rules(vec![rule(RuleDecision::Allow, v2.pin.as_deref())]);
    assert!(matches!(
        next.decide(&v2, None),
        GateVerdict::Run {
            by: RunBy::Rule,
            ..
        }
    ));
    // Without a store, a changed tool still asks; the diff is just not known.
    let bare = gate(
        ApprovalPolicy::AskAll,
        vec![rule(RuleDecision::Allow, Some(&p1))],
    );
    asks_as_changed(bare.decide(&v2, None));
    assert!(bare.pin_change(&v2).expect("changed").diff.is_empty());
}

#[test]
fn deny_rules_and_local_tools_take_no_pins() {
    let (v1, v2) = (write_note(false), write_note(true));
    let gate = gate(ApprovalPolicy::AskAll, vec![rule(RuleDecision::Deny, None)]);
    assert!(matches!(gate.decide(&v1, None), GateVerdict::Deny { .. }));
    assert!(matches!(gate.decide(&v2, None), GateVerdict::Deny { .. }));
    assert_eq!(gate.pin_state(&v2), PinState::Unpinned);
    let mut local = write_note(false);
    local.origin = None;
    local.pin = None;
    gate.record(&local, ApprovalDecision::AllowForSession)
        .unwrap();
    assert_eq!(gate.pin_state(&local), PinState::Unpinned);
}
