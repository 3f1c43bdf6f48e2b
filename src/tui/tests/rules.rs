//! Snapshot tests of what hooks and rules add to the console: the approval modal when a rule
//! asks and when `A` asks once more, the `L` modal of rules and session approvals, hook runs
//! in the Events pane. The fixtures are the snapshot tests' (`tests.rs`).

use std::time::Duration;

use serde_json::json;

use crate::approval::{ApprovalRequest, DescriptorFingerprint};
use crate::config::{AnnotationTrust, ApprovalRule, RuleDecision, ToolPattern};
use crate::runtime::RuntimeEvent;
use crate::tool::SideEffectLevel;
use crate::tui::modals::ledger::LedgerRow;
use crate::tui::modals::Modal;
use crate::tui::pane_state::Pane;
use crate::tui::tests::fixtures::{descriptor, ignored, populated};
use crate::tui::tests::snapshot;

#[test]
fn an_ask_rule_in_the_approval_modal_and_always_asked_once_more() {
    // The why names the rule that asks; `A` on a destructive tool asks once more.
    let mut confirm = populated().0;
    let tool = ignored("notes", "delete_note");
    let why = format!(
        "{} is mutating, destructive ({}); policy.rules[0] (tool mcp__notes__*) says ask",
        tool.name, tool.provenance
    );
    confirm.on_runtime_event(RuntimeEvent::ApprovalRequested(
        ApprovalRequest::new(10, tool, json!({"title": "groceries"}), why).0,
    ));
    snapshot("approval_rule_asks", &confirm);
    confirm.overlays.approval_confirm = true;
    snapshot("approval_always_confirm", &confirm);
}

#[test]
fn rules_and_session_approvals() {
    let (mut app, _) = populated();
    let tool = descriptor(
        "notes-trusted",
        "write_note",
        SideEffectLevel::Mutating,
        false,
        AnnotationTrust::Trust,
        "t",
    );
    app.overlays.modal = Some(Modal::Ledger {
        entries: vec![
            LedgerRow::Rule {
                index: 0,
                rule: ApprovalRule {
                    pin: None,
                    pattern: ToolPattern {
                        tool: Some("mcp__notes__delete_*".into()),
                        server: None,
                    },
                    decision: RuleDecision::Deny,
                },
                from: None,
            },
            LedgerRow::Rule {
                index: 1,
                rule: ApprovalRule::allow_tool("mcp__notes__write_note", None),
                from: None,
            },
            LedgerRow::Session {
                tool: tool.name.clone(),
                fingerprint: DescriptorFingerprint::of(&tool).short(),
            },
        ],
        selected: 1,
        asking: false,
    });
    snapshot("ledger", &app);
    app.overlays.modal = Some(Modal::Ledger {
        entries: Vec::new(),
        selected: 0,
        asking: false,
    });
    snapshot("ledger_empty", &app);
    // Over `attach`, before the daemons first answer: not "no rule", but that they are asked.
    app.overlays.modal = Some(Modal::Ledger {
        entries: Vec::new(),
        selected: 0,
        asking: true,
    });
    snapshot("ledger_asking", &app);
}

#[test]
fn hook_runs_in_the_events_pane() {
    use crate::config::HookEvent;
    use crate::runtime::{HookAnswer, HookOutcome, HookRun};
    let (mut app, t0) = populated();
    app.focus = Pane::Events;
    let run = |event, call: Option<u64>, outcome, ms| HookRun {
        hook: 0,
        event,
        action: "mcp_tool guard/echo".into(),
        call,
        tool: call.map(|_| "mcp__notes__delete_note".to_string()),
        server: Some("notes".into()),
        elapsed: Duration::from_millis(ms),
        outcome,
    };
    for (ms, r) in [
        (
            1_000,
            run(
                HookEvent::PreToolUse,
                Some(7),
                HookOutcome::Decided {
                    decision: HookAnswer::Deny,
                    reason: Some("notes are kept".into()),
                },
                14,
            ),
        ),
        (
            1_100,
            run(HookEvent::PostToolUse, Some(6), HookOutcome::Ran, 3),
        ),
        (
            1_200,
            run(
                HookEvent::ServerReady,
                None,
                HookOutcome::Warning("timed out after 2.0s".into()),
                2_000,
            ),
        ),
    ] {
        app.set_now(t0 + Duration::from_millis(ms));
        app.on_runtime_event(RuntimeEvent::HookRan(r));
    }
    app.set_now(t0 + Duration::from_millis(1_500));
    snapshot("events_hooks", &app);
}
