//! Tests of the approval gate: one per branch of `evaluate`, and a property test of its promises.

use super::*;
use proptest::prelude::*;
use serde_json::json;

fn policy(ceiling: SideEffectCeiling, approval: ApprovalPolicy) -> PolicyConfig {
    PolicyConfig {
        side_effect_ceiling: ceiling,
        approval,
        ..PolicyConfig::default()
    }
}

fn tool(name: &str, side: SideEffectLevel, destructive: DestructiveBehavior) -> ToolDescriptor {
    ToolDescriptor {
        name: name.into(),
        description: format!("the {name} tool"),
        input_schema: json!({"type": "object"}),
        side_effect: side,
        destructive,
        provenance: "readOnlyHint=false, destructiveHint=false, trusted".into(),
        origin: None,
    }
}

fn write_note() -> ToolDescriptor {
    tool(
        "mcp__demo__write_note",
        SideEffectLevel::Mutating,
        DestructiveBehavior::NonDestructive,
    )
}

fn read_note() -> ToolDescriptor {
    tool(
        "mcp__demo__read_note",
        SideEffectLevel::ReadOnly,
        DestructiveBehavior::NonDestructive,
    )
}

fn delete_note() -> ToolDescriptor {
    tool(
        "mcp__demo__delete_note",
        SideEffectLevel::Mutating,
        DestructiveBehavior::Destructive,
    )
}

#[test]
fn gate_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ApprovalGate>();
}

#[test]
fn ceiling_refuses_mutating_tools_and_names_itself() {
    for approval in [
        ApprovalPolicy::Never,
        ApprovalPolicy::AskAll,
        ApprovalPolicy::AskMutating,
    ] {
        let gate = ApprovalGate::new(policy(SideEffectCeiling::ReadOnly, approval));
        assert_eq!(
            gate.evaluate(&write_note()),
            GateVerdict::Refuse {
                why: "refused: mcp__demo__write_note is mutating and \
                      policy.side_effect_ceiling is read_only"
                    .into()
            }
        );
    }
}

#[test]
fn ceiling_refuses_even_a_session_approved_tool() {
    let gate = ApprovalGate::new(policy(
        SideEffectCeiling::ReadOnly,
        ApprovalPolicy::AskMutating,
    ));
    assert_eq!(
        gate.record(&write_note(), ApprovalDecision::AllowForSession),
        Ok(())
    );
    assert!(matches!(
        gate.evaluate(&write_note()),
        GateVerdict::Refuse { .. }
    ));
}

#[test]
fn policy_never_runs_everything_within_the_ceiling() {
    let gate = ApprovalGate::new(policy(SideEffectCeiling::Mutating, ApprovalPolicy::Never));
    for t in [write_note(), read_note(), delete_note()] {
        assert!(
            matches!(gate.evaluate(&t), GateVerdict::Run { .. }),
            "{}",
            t.name
        );
    }
    let read_only_ceiling =
        ApprovalGate::new(policy(SideEffectCeiling::ReadOnly, ApprovalPolicy::Never));
    assert!(matches!(
        read_only_ceiling.evaluate(&read_note()),
        GateVerdict::Run { .. }
    ));
}

#[test]
fn read_only_runs_under_ask_mutating_but_asks_under_ask_all() {
    let gate = ApprovalGate::new(policy(
        SideEffectCeiling::Mutating,
        ApprovalPolicy::AskMutating,
    ));
    assert_eq!(
        gate.evaluate(&read_note()),
        GateVerdict::Run {
            why: "mcp__demo__read_note is read_only and policy.approval is ask_mutating".into()
        }
    );
    let all = ApprovalGate::new(policy(SideEffectCeiling::Mutating, ApprovalPolicy::AskAll));
    assert!(matches!(
        all.evaluate(&read_note()),
        GateVerdict::Ask { .. }
    ));
}

#[test]
fn contradictory_read_only_destructive_tool_asks() {
    let gate = ApprovalGate::new(PolicyConfig::default());
    let odd = tool(
        "odd",
        SideEffectLevel::ReadOnly,
        DestructiveBehavior::Destructive,
    );
    assert!(matches!(gate.evaluate(&odd), GateVerdict::Ask { .. }));
}

#[test]
fn mutating_asks_with_traits_and_provenance() {
    let gate = ApprovalGate::new(PolicyConfig::default());
    assert_eq!(
        gate.evaluate(&write_note()),
        GateVerdict::Ask {
            why: "mcp__demo__write_note is mutating, non-destructive \
                  (readOnlyHint=false, destructiveHint=false, trusted); \
                  policy.approval is ask_mutating"
                .into()
        }
    );
}

#[test]
fn session_approval_runs_until_revoked() {
    let gate = ApprovalGate::new(PolicyConfig::default());
    assert_eq!(
        gate.record(&write_note(), ApprovalDecision::AllowOnce),
        Ok(())
    );
    assert!(matches!(
        gate.evaluate(&write_note()),
        GateVerdict::Ask { .. }
    ));
    assert_eq!(gate.record(&write_note(), ApprovalDecision::Deny), Ok(()));
    assert!(gate.ledger().is_empty());

    assert_eq!(
        gate.record(&write_note(), ApprovalDecision::AllowForSession),
        Ok(())
    );
    assert_eq!(
        gate.evaluate(&write_note()),
        GateVerdict::Run {
            why: "approved for this session".into()
        }
    );
    let ledger = gate.ledger();
    assert_eq!(ledger.len(), 1);
    assert_eq!(ledger[0].tool_name, "mcp__demo__write_note");

    assert!(gate.revoke("mcp__demo__write_note"));
    assert!(!gate.revoke("mcp__demo__write_note"));
    assert!(matches!(
        gate.evaluate(&write_note()),
        GateVerdict::Ask { .. }
    ));
}

#[test]
fn session_approval_of_a_read_only_tool_under_ask_all() {
    let gate = ApprovalGate::new(policy(SideEffectCeiling::Mutating, ApprovalPolicy::AskAll));
    assert_eq!(
        gate.record(&read_note(), ApprovalDecision::AllowForSession),
        Ok(())
    );
    assert!(matches!(
        gate.evaluate(&read_note()),
        GateVerdict::Run { .. }
    ));
}

#[test]
fn destructive_tools_are_never_remembered() {
    let gate = ApprovalGate::new(PolicyConfig::default());
    assert_eq!(
        gate.record(&delete_note(), ApprovalDecision::AllowForSession),
        Err(LedgerError::DestructiveNotRemembered {
            tool: "mcp__demo__delete_note".into()
        })
    );
    assert!(gate.ledger().is_empty());
    assert!(matches!(
        gate.evaluate(&delete_note()),
        GateVerdict::Ask { .. }
    ));
}

#[test]
fn a_changed_tool_asks_again() {
    let gate = ApprovalGate::new(PolicyConfig::default());
    assert_eq!(
        gate.record(&write_note(), ApprovalDecision::AllowForSession),
        Ok(())
    );
    let mut changed = write_note();
    changed.input_schema = json!({"type": "object", "properties": {"path": {}}});
    assert!(matches!(gate.evaluate(&changed), GateVerdict::Ask { .. }));
    // A destructive tool under the same name never inherits the approval either.
    let mut now_destructive = write_note();
    now_destructive.destructive = DestructiveBehavior::Destructive;
    assert_eq!(
        gate.record(&write_note(), ApprovalDecision::AllowForSession),
        Ok(())
    );
    assert!(matches!(
        gate.evaluate(&now_destructive),
        GateVerdict::Ask { .. }
    ));
}

fn side_effect() -> impl Strategy<Value = SideEffectLevel> {
    prop_oneof![
        Just(SideEffectLevel::ReadOnly),
        Just(SideEffectLevel::Mutating)
    ]
}

fn destructive() -> impl Strategy<Value = DestructiveBehavior> {
    prop_oneof![
        Just(DestructiveBehavior::NonDestructive),
        Just(DestructiveBehavior::Destructive)
    ]
}

fn ceiling() -> impl Strategy<Value = SideEffectCeiling> {
    prop_oneof![
        Just(SideEffectCeiling::ReadOnly),
        Just(SideEffectCeiling::Mutating)
    ]
}

fn approval() -> impl Strategy<Value = ApprovalPolicy> {
    prop_oneof![
        Just(ApprovalPolicy::AskMutating),
        Just(ApprovalPolicy::AskAll),
        Just(ApprovalPolicy::Never)
    ]
}

fn decision() -> impl Strategy<Value = ApprovalDecision> {
    prop_oneof![
        Just(ApprovalDecision::AllowOnce),
        Just(ApprovalDecision::AllowForSession),
        Just(ApprovalDecision::Deny)
    ]
}

proptest! {
    #[test]
    fn gate_keeps_its_promises(
        tools in proptest::collection::vec((side_effect(), destructive()), 1..4),
        ceiling in ceiling(),
        approval in approval(),
        // Decisions recorded before evaluating: (which tool, its traits at the time, answer).
        history in proptest::collection::vec(
            (0usize..4, side_effect(), destructive(), decision()), 0..8),
    ) {
        let gate = ApprovalGate::new(policy(ceiling, approval));
        let descriptors: Vec<ToolDescriptor> = tools
            .iter()
            .enumerate()
            .map(|(i, (s, d))| tool(&format!("t{i}"), *s, *d))
            .collect();
        for (index, side, destr, answer) in history {
            let recorded = tool(&format!("t{index}"), side, destr);
            let result = gate.record(&recorded, answer);
            if answer == ApprovalDecision::AllowForSession && destr.is_destructive() {
                prop_assert!(result.is_err());
            } else {
                prop_assert!(result.is_ok());
            }
        }
        for t in &descriptors {
            let verdict = gate.evaluate(t);
            let runs = matches!(verdict, GateVerdict::Run { .. });
            if t.destructive.is_destructive() && approval != ApprovalPolicy::Never {
                prop_assert!(!runs, "destructive {:?} ran: {:?}", t, verdict);
            }
            if ceiling == SideEffectCeiling::ReadOnly && t.side_effect == SideEffectLevel::Mutating {
                prop_assert!(
                    matches!(verdict, GateVerdict::Refuse { .. }),
                    "mutating {:?} under read_only ceiling: {:?}", t, verdict
                );
            }
            if t.side_effect == SideEffectLevel::ReadOnly {
                prop_assert!(
                    !matches!(verdict, GateVerdict::Refuse { .. }),
                    "read-only {:?} refused: {:?}", t, verdict
                );
            }
        }
        let remembered_destructive = gate
            .ledger()
            .iter()
            .any(|e| e.fingerprint.destructive().is_destructive());
        prop_assert!(!remembered_destructive);
    }
}
