//! A tool call's line in the Conversation: its time with the wait for approval apart, how its
//! approval was given (`A`: always), and what let it through without asking (a rule).

use std::time::Duration;

use super::{conversation, finished, started, tool_call};
use crate::approval::{AnsweredBy, ApprovalDecision};
use crate::runtime::{CallStatus, RuntimeEvent};
use crate::tui::tests::draw;

#[test]
fn a_calls_time_leaves_the_wait_for_approval_apart_as_in_calls() {
    let (mut app, t0) = conversation();
    app.set_now(t0 + Duration::from_millis(3_000));
    app.on_runtime_event(RuntimeEvent::ApprovalAnswered {
        id: 9,
        decision: ApprovalDecision::AllowOnce,
        by: AnsweredBy::Operator,
    });
    app.on_runtime_event(RuntimeEvent::CallStatus {
        id: 9,
        status: CallStatus::Running,
    });
    app.set_now(t0 + Duration::from_millis(3_200));
    finished(&mut app, 9, CallStatus::Ok, "saved", 2_700);
    let screen = draw(&app, (140, 40));
    assert!(
        screen.contains("#9 ✓ ok 200ms (allowed once by you after 2.5s)"),
        "{screen}"
    );
}

/// `A` is said as always on its call's line, and a later call that a rule (or a hook, or a
/// session approval) lets through names it.
#[test]
fn always_and_the_rule_that_let_a_call_through_are_said_on_its_line() {
    let (mut app, t0) = conversation();
    app.set_now(t0 + Duration::from_millis(3_000));
    app.on_runtime_event(RuntimeEvent::ApprovalAnswered {
        id: 9,
        decision: ApprovalDecision::AllowAlways,
        by: AnsweredBy::Operator,
    });
    finished(&mut app, 9, CallStatus::Ok, "saved", 20);
    let write = "mcp__notes-trusted__write_note";
    started(
        &mut app,
        11,
        write,
        "(demo model) I will save the note \"b\".",
    );
    tool_call(
        &mut app,
        2,
        "call_1",
        write,
        r#"{"title":"b","body":"x"}"#,
        "",
    );
    app.on_runtime_event(RuntimeEvent::CallAllowed {
        id: 11,
        why: "allowed by policy.rules[1] (tool mcp__notes-trusted__write_note)".into(),
    });
    finished(&mut app, 11, CallStatus::Ok, "saved", 3);
    let screen = draw(&app, (140, 40));
    let line = |id: &str| {
        screen
            .lines()
            .find(|l| l.contains(&format!("→ {id} ")))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line("#9").contains("(always allowed by you after "),
        "{screen}"
    );
    assert!(
        line("#11").contains("(allowed by policy.rules[1] (tool mcp__notes-trusted__write_note"),
        "{screen}"
    );
}
