//! Tests of the approval gate: one per branch of `evaluate`, and a property test of its promises.

use super::*;
use crate::approval::{glob_matches, HookDecision, HookVerdict};
use crate::config::{AnnotationTrust, ToolPattern};
use crate::tool::ToolOrigin;
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
        pin: None,
        name: name.into(),
        description: format!("the {name} tool"),
        input_schema: json!({"type": "object"}).into(),
        side_effect: side,
        destructive,
        provenance: "readOnlyHint=false, destructiveHint=false, trusted".into(),
        flags: Vec::new(),
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
                why: "mcp__demo__write_note is mutating and \
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
            why: "the tool is read_only and policy.approval is ask_mutating".into(),
            by: RunBy::Policy,
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
            why: "mcp__demo__write_note is MUTATING because \
                  readOnlyHint=false, destructiveHint=false, trusted; \
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
            why: "approved for this session".into(),
            by: RunBy::Session,
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
    changed.input_schema = json!({"type": "object", "properties": {"path": {}}}).into();
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

fn rule(tool: Option<&str>, server: Option<&str>, decision: RuleDecision) -> ApprovalRule {
    ApprovalRule {
        pin: None,
        pattern: ToolPattern {
            tool: tool.map(String::from),
            server: server.map(String::from),
        },
        decision,
    }
}

fn gate_with(policy_: PolicyConfig, rules: Vec<ApprovalRule>) -> ApprovalGate {
    ApprovalGate::new(PolicyConfig { rules, ..policy_ })
}

fn hook(verdict: HookVerdict) -> HookDecision {
    HookDecision {
        verdict,
        by: "hooks[0] (mcp_tool guard/check)".into(),
        reason: Some("because".into()),
    }
}

#[test]
fn a_deny_holds_over_everything() {
    let never = policy(SideEffectCeiling::Mutating, ApprovalPolicy::Never);
    let gate = gate_with(
        never.clone(),
        vec![rule(Some("mcp__demo__delete_*"), None, RuleDecision::Deny)],
    );
    assert_eq!(
        gate.decide(&delete_note(), Some(&hook(HookVerdict::Allow))),
        GateVerdict::Deny {
            why: "denied by policy.rules[0] (tool mcp__demo__delete_*)".into()
        }
    );
    // A hook's deny wins over an allow rule, and its reason is the why.
    let gate = gate_with(never, vec![rule(Some("*"), None, RuleDecision::Allow)]);
    assert_eq!(
        gate.decide(&read_note(), Some(&hook(HookVerdict::Deny))),
        GateVerdict::Deny {
            why: "denied by hooks[0] (mcp_tool guard/check): because".into()
        }
    );
    // Even above the ceiling a deny says so (it would not have run either way).
    let gate = gate_with(
        policy(SideEffectCeiling::ReadOnly, ApprovalPolicy::AskMutating),
        Vec::new(),
    );
    assert!(matches!(
        gate.decide(&write_note(), Some(&hook(HookVerdict::Deny))),
        GateVerdict::Deny { .. }
    ));
}

#[test]
fn an_allow_skips_the_question_but_never_the_ceiling() {
    let gate = gate_with(
        policy(SideEffectCeiling::Mutating, ApprovalPolicy::AskAll),
        vec![rule(
            Some("mcp__demo__delete_note"),
            None,
            RuleDecision::Allow,
        )],
    );
    assert_eq!(
        gate.evaluate(&delete_note()),
        GateVerdict::Run {
            why: "allowed by policy.rules[0] (tool mcp__demo__delete_note)".into(),
            by: RunBy::Rule,
        }
    );
    assert_eq!(
        gate.decide(&write_note(), Some(&hook(HookVerdict::Allow))),
        GateVerdict::Run {
            why: "allowed by hooks[0] (mcp_tool guard/check): because".into(),
            by: RunBy::Hook,
        }
    );
    let read_only = gate_with(
        policy(SideEffectCeiling::ReadOnly, ApprovalPolicy::AskAll),
        vec![rule(Some("*"), None, RuleDecision::Allow)],
    );
    for t in [write_note(), delete_note()] {
        assert!(matches!(
            read_only.decide(&t, Some(&hook(HookVerdict::Allow))),
            GateVerdict::Refuse { .. }
        ));
    }
}

#[test]
fn an_ask_rule_asks_where_the_policy_or_a_hook_would_run() {
    let gate = gate_with(
        policy(SideEffectCeiling::Mutating, ApprovalPolicy::Never),
        vec![rule(Some("mcp__demo__*"), None, RuleDecision::Ask)],
    );
    assert_eq!(
        gate.decide(&read_note(), Some(&hook(HookVerdict::Allow))),
        GateVerdict::Ask {
            why: "mcp__demo__read_note is read-only because readOnlyHint=false, \
                  destructiveHint=false, trusted; policy.rules[0] (tool mcp__demo__*) says ask"
                .into()
        }
    );
    // The operator's session approval still counts.
    assert_eq!(
        gate.record(&write_note(), ApprovalDecision::AllowForSession),
        Ok(())
    );
    assert!(matches!(
        gate.evaluate(&write_note()),
        GateVerdict::Run { .. }
    ));
}

#[test]
fn rules_can_be_replaced_while_the_gate_runs() {
    let gate = ApprovalGate::new(PolicyConfig::default());
    assert!(matches!(
        gate.evaluate(&delete_note()),
        GateVerdict::Ask { .. }
    ));
    gate.set_rules(vec![rule(
        Some("mcp__demo__delete_note"),
        None,
        RuleDecision::Allow,
    )]);
    assert!(matches!(
        gate.evaluate(&delete_note()),
        GateVerdict::Run { .. }
    ));
    assert_eq!(gate.rule_for(&delete_note()).map(|(i, _)| i), Some(0));
    assert_eq!(gate.policy().rules.len(), 1);
    gate.set_rules(Vec::new());
    assert!(gate.rule_for(&delete_note()).is_none());
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

fn rule_decision() -> impl Strategy<Value = RuleDecision> {
    prop_oneof![
        Just(RuleDecision::Allow),
        Just(RuleDecision::Deny),
        Just(RuleDecision::Ask)
    ]
}

fn hook_verdict() -> impl Strategy<Value = Option<HookVerdict>> {
    prop_oneof![
        Just(None),
        Just(Some(HookVerdict::Allow)),
        Just(Some(HookVerdict::Deny))
    ]
}

/// A rule over the tools `mcp__s{0,1}__t{0..4}`: some globs, some servers, some both.
fn random_rule() -> impl Strategy<Value = ApprovalRule> {
    let globs = prop_oneof![
        Just(None),
        Just(Some("*")),
        Just(Some("mcp__s0__*")),
        Just(Some("mcp__*__t1")),
        Just(Some("t2")),
        Just(Some("mcp__s1__t?")),
    ];
    let servers = prop_oneof![Just(None), Just(Some("s0")), Just(Some("s1"))];
    (globs, servers, rule_decision()).prop_map(|(tool, server, decision)| {
        let tool = if tool.is_none() && server.is_none() {
            Some("*")
        } else {
            tool
        };
        rule(tool, server, decision)
    })
}

/// A remote tool of server `s{i % 2}` named `t{i}`.
fn served(i: usize, side: SideEffectLevel, destructive: DestructiveBehavior) -> ToolDescriptor {
    let server = format!("s{}", i % 2);
    ToolDescriptor {
        flags: Vec::new(),
        origin: Some(ToolOrigin {
            title: None,
            output_schema: None,
            server: server.clone(),
            tool: format!("t{i}"),
            trust: AnnotationTrust::Trust,
            annotations: None,
        }),
        ..tool(&format!("mcp__{server}__t{i}"), side, destructive)
    }
}

proptest! {
    #[test]
    fn rules_and_hooks_keep_the_promises(
        tools in proptest::collection::vec((side_effect(), destructive(), hook_verdict()), 1..5),
        rules in proptest::collection::vec(random_rule(), 0..5),
        ceiling in ceiling(),
        approval in approval(),
    ) {
        let gate = gate_with(policy(ceiling, approval), rules.clone());
        for (i, (side, destr, said)) in tools.iter().enumerate() {
            let t = served(i, *side, *destr);
            let hooked = said.map(hook);
            let verdict = gate.decide(&t, hooked.as_ref());
            // The first rule that matches, found the long way round.
            let first = rules.iter().find(|r| {
                r.pattern.server.as_deref().is_none_or(|s| Some(s) == t.origin.as_ref().map(|o| o.server.as_str()))
                    && r.pattern.tool.as_deref().is_none_or(|g| {
                        glob_matches(g, &t.name)
                            || (r.pattern.server.is_some() && glob_matches(g, &format!("t{i}")))
                    })
            });
            let rule_says = first.map(|r| r.decision);
            let denied = *said == Some(HookVerdict::Deny) || rule_says == Some(RuleDecision::Deny);
            // A deny always holds.
            prop_assert_eq!(denied, matches!(verdict, GateVerdict::Deny { .. }), "{:?} {:?} {:?}", t.name, verdict, rule_says);
            // Nothing above the ceiling runs, whatever allows it.
            if ceiling == SideEffectCeiling::ReadOnly && *side == SideEffectLevel::Mutating {
                prop_assert!(!matches!(verdict, GateVerdict::Run { .. } | GateVerdict::Ask { .. }), "{:?}", verdict);
            }
            // A destructive call runs without asking only under `never` or an allow.
            if destr.is_destructive() && matches!(verdict, GateVerdict::Run { .. }) {
                prop_assert!(
                    approval == ApprovalPolicy::Never
                        || *said == Some(HookVerdict::Allow)
                        || rule_says == Some(RuleDecision::Allow),
                    "{:?} ran: {:?}", t.name, verdict
                );
            }
            // An ask rule asks (no session approvals were recorded here).
            if rule_says == Some(RuleDecision::Ask) && !denied && !matches!(verdict, GateVerdict::Refuse { .. }) {
                prop_assert!(matches!(verdict, GateVerdict::Ask { .. }), "{:?}", verdict);
            }
        }
    }
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
