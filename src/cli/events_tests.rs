//! Tests of `events.rs`: each event's JSON shape and its line for people.

use super::*;
use crate::runtime::LogLevel;
use serde_json::{json, Value};

#[test]
fn log_lines_carry_level_logger_and_data_and_no_escapes() {
    let event = RuntimeEvent::ServerLog {
        server: "s".into(),
        level: LogLevel::Warning,
        logger: Some("db".into()),
        data: json!({"n": 1, "evil": "\u{1b}[2J"}),
    };
    let v = event_json(&event);
    assert_eq!(v["type"], "server_log");
    assert_eq!(v["level"], "warning");
    assert_eq!(v["logger"], "db");
    assert_eq!(v["data"]["n"], 1);
    let line = event_line(&event);
    assert!(line.starts_with("[s] warning db: "), "{line}");
    assert!(!line.contains('\u{1b}'), "{line}");
}

#[test]
fn an_answer_says_refused_apart_from_denied_and_keeps_its_json_words() {
    let answered = |decision, by| RuntimeEvent::ApprovalAnswered {
        id: 1,
        decision,
        by,
    };
    let refused = answered(ApprovalDecision::Deny, AnsweredBy::NoTerminal);
    assert_eq!(
        event_line(&refused),
        "call #1 refused: there is no terminal to ask on (pass --yes to approve)"
    );
    assert_eq!(event_json(&refused)["decision"], "deny");
    assert_eq!(event_json(&refused)["by"], "no_terminal");
    assert_eq!(
        event_line(&answered(ApprovalDecision::Deny, AnsweredBy::Operator)),
        "call #1 denied by you"
    );
    assert_eq!(
        event_line(&answered(ApprovalDecision::AllowOnce, AnsweredBy::YesFlag)),
        "call #1 allowed by --yes"
    );
}

#[test]
fn hook_runs_have_their_shape_and_line() {
    use crate::config::HookEvent;
    use crate::runtime::HookAnswer;
    let mut run = HookRun {
        hook: 1,
        event: HookEvent::PreToolUse,
        action: "mcp_tool guard/echo".into(),
        call: Some(3),
        tool: Some("mcp__notes__delete_note".into()),
        server: Some("notes".into()),
        elapsed: std::time::Duration::from_millis(12),
        outcome: HookOutcome::Decided {
            decision: HookAnswer::Deny,
            reason: Some("not on \u{1b}[2Jfridays".into()),
        },
    };
    assert_eq!(
        event_json(&RuntimeEvent::HookRan(run.clone())),
        json!({"type": "hook", "hook": 1, "event": "pre_tool_use", "action": "mcp_tool guard/echo",
               "call_id": 3, "tool": "mcp__notes__delete_note", "server": "notes", "elapsed_ms": 12,
               "decision": "deny", "reason": "not on \u{1b}[2Jfridays", "warning": null})
    );
    assert_eq!(
        event_line(&RuntimeEvent::HookRan(run.clone())),
        "hooks[1] (mcp_tool guard/echo) on pre_tool_use of call #3 mcp__notes__delete_note (12ms): deny (not on fridays)"
    );
    run.event = HookEvent::ServerFailed;
    run.call = None;
    run.tool = None;
    run.outcome = HookOutcome::Warning("timed out after 2.0s".into());
    let v = event_json(&RuntimeEvent::HookRan(run.clone()));
    assert_eq!(
        (v["decision"].clone(), v["warning"].clone()),
        (Value::Null, json!("timed out after 2.0s"))
    );
    assert_eq!(
        event_line(&RuntimeEvent::HookRan(run)),
        "hooks[1] (mcp_tool guard/echo) on server_failed of [notes] (12ms): warning: timed out after 2.0s; going on as if it said nothing"
    );
}

#[test]
fn progress_and_drops_have_their_shapes() {
    let v = event_json(&RuntimeEvent::CallProgress {
        id: 3,
        progress: 2.0,
        total: Some(5.0),
        message: None,
    });
    assert_eq!(
        v,
        json!({"type": "call_progress", "id": 3, "progress": 2.0, "total": 5.0, "message": null})
    );
    assert_eq!(
        event_line(&RuntimeEvent::EventsDropped { count: 7 }),
        "(7 events dropped: the reader fell behind)"
    );
}
