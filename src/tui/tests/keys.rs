//! Key handling tests of the console: quitting while calls run, answering approvals, a
//! refused trust write, the argument editor turning into a call. The fixtures are the snapshot
//! tests' (`tests.rs`).

use serde_json::json;

use crate::approval::ApprovalRequest;
use crate::config::AnnotationTrust;
use crate::runtime::RuntimeEvent;
use crate::tool::SideEffectLevel;
use crate::tui::modals::Modal;
use crate::tui::pane_state::Pane;
use crate::tui::tests::fixtures::{descriptor, ignored, key, populated, trusted_write_note};

#[test]
fn quitting_asks_while_calls_run() {
    use crossterm::event::KeyCode;
    let (mut app, _) = populated();
    assert!(app.calls.running() > 0);
    assert!(app.on_key(key(KeyCode::Char('q'))).is_empty());
    assert!(app.overlays.quit_asked);
    assert!(app.on_key(key(KeyCode::Esc)).is_empty());
    assert!(app.overlays.modal.is_none() && !app.should_quit());
    app.on_key(key(KeyCode::Char('q')));
    assert_eq!(
        app.on_key(key(KeyCode::Char('y'))),
        vec![crate::tui::messages::Effect::Quit]
    );
    assert!(app.should_quit());
}

#[tokio::test]
async fn approval_keys_answer_the_request() {
    use crate::approval::ApprovalDecision;
    use crossterm::event::KeyCode;
    let (mut app, _) = populated();
    let (first, first_reply) =
        ApprovalRequest::new(1, ignored("notes", "delete_note"), json!({}), "why".into());
    let (second, second_reply) =
        ApprovalRequest::new(2, trusted_write_note(), json!({}), "why".into());
    app.on_runtime_event(RuntimeEvent::ApprovalRequested(first));
    app.on_runtime_event(RuntimeEvent::ApprovalRequested(second));
    // `a` is not offered for a destructive tool: nothing answered, the operator is told.
    app.on_key(key(KeyCode::Char('a')));
    assert_eq!(app.overlays.approvals.len(), 2);
    assert!(app
        .notice
        .as_ref()
        .is_some_and(|(_, t)| t.contains("destructive")));
    app.on_key(key(KeyCode::Esc));
    assert_eq!(first_reply.await.ok(), Some(ApprovalDecision::Deny));
    app.on_key(key(KeyCode::Char('a')));
    assert_eq!(
        second_reply.await.ok(),
        Some(ApprovalDecision::AllowForSession)
    );
    assert!(app.overlays.approvals.is_empty());
}

#[test]
fn a_refused_trust_write_is_reported_and_nothing_is_pending() {
    use crate::tui::messages::AppEvent;
    let (mut app, _) = populated();
    app.on_app_event(AppEvent::TrustWritten {
        server: "notes".into(),
        trust: AnnotationTrust::Trust,
        result: Err(
            "/home/op/aimon.yaml: changed on disk since it was loaded; nothing was written".into(),
        ),
    });
    assert!(app.servers[0].restart_pending.is_none());
    let (level, text) = app.notice.clone().unwrap();
    assert_eq!(level, crate::tui::messages::Level::Error);
    assert!(text.contains("changed on disk"));
    app.on_app_event(AppEvent::TrustWritten {
        server: "notes".into(),
        trust: AnnotationTrust::Trust,
        result: Ok(42),
    });
    assert_eq!(app.servers[0].restart_pending, Some(AnnotationTrust::Trust));
    assert_eq!(app.session.config_digest, 42);
}

#[test]
fn a_submitted_editor_becomes_a_call_effect_and_its_arguments_are_kept() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let (mut app, _) = populated();
    app.focus = Pane::Tools;
    app.panes.tools.selected = 3; // mcp__notes-trusted__echo, schema: title + body strings, both required
    app.on_key(key(KeyCode::Enter));
    assert!(matches!(app.overlays.modal, Some(Modal::Editor(_))));
    let send = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL);
    // The fields come in the schema's order: title, then body.
    for c in "t1".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    app.on_key(key(KeyCode::Down));
    for c in "b1".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    let effects = app.on_key(send);
    assert_eq!(
        effects,
        vec![crate::tui::messages::Effect::Call {
            tool: "mcp__notes-trusted__echo".into(),
            arguments: json!({"body": "b1", "title": "t1"}),
        }]
    );
    // Tools keeps the keys: the next Enter calls again, from these arguments; the new call is
    // the one selected in Calls, and the notice says where it shows.
    assert_eq!(app.focus, Pane::Tools);
    assert_eq!(app.panes.calls.selected, app.calls.rows.len());
    assert!(
        app.notice
            .as_ref()
            .is_some_and(|(_, t)| t.contains("Calls (4)")),
        "{:?}",
        app.notice
    );
    app.on_key(key(KeyCode::Enter));
    let Some(Modal::Editor(editor)) = &app.overlays.modal else {
        panic!("no editor");
    };
    assert_eq!(editor.form.as_ref().unwrap().texts, vec!["t1", "b1"]);
    crate::tui::tests::snapshot("editor_last_arguments", &app);
}

#[tokio::test]
async fn always_allow_answers_always_and_asks_for_the_rule_to_be_written() {
    use crate::approval::ApprovalDecision;
    use crate::tui::messages::Effect;
    use crossterm::event::KeyCode;
    let (mut app, _) = populated();
    let write = descriptor(
        "notes-trusted",
        "write_note",
        SideEffectLevel::Mutating,
        false,
        AnnotationTrust::Trust,
        "t",
    );
    // The rule holds the pin of the definition approved.
    let pin = write.pin.clone();
    assert!(pin.is_some());
    let (request, reply) = ApprovalRequest::new(1, write, json!({}), "why".into());
    app.on_runtime_event(RuntimeEvent::ApprovalRequested(request));
    assert_eq!(
        app.on_key(key(KeyCode::Char('A'))),
        vec![Effect::AlwaysAllow {
            pin,
            tool: "mcp__notes-trusted__write_note".into(),
            digest: 1,
        }]
    );
    assert_eq!(reply.await.ok(), Some(ApprovalDecision::AllowAlways));
    assert!(app.overlays.approvals.is_empty());

    // A destructive tool: asked once more; n goes back, y writes.
    let delete = ignored("notes", "delete_note");
    let pin = delete.pin.clone();
    let (request, reply) = ApprovalRequest::new(2, delete, json!({}), "why".into());
    app.on_runtime_event(RuntimeEvent::ApprovalRequested(request));
    // `a` is refused for it, with a notice; `A` asks once more, and that notice goes.
    assert!(app.on_key(key(KeyCode::Char('a'))).is_empty());
    assert!(app.notice.is_some());
    assert!(app.on_key(key(KeyCode::Char('A'))).is_empty());
    assert!(app.overlays.approval_confirm);
    assert!(app.notice.is_none(), "{:?}", app.notice);
    assert!(app.on_key(key(KeyCode::Char('n'))).is_empty());
    assert!(!app.overlays.approval_confirm);
    assert_eq!(
        app.overlays.approvals.len(),
        1,
        "back to the question, not answered"
    );
    assert!(app.on_key(key(KeyCode::Char('A'))).is_empty());
    assert_eq!(
        app.on_key(key(KeyCode::Char('y'))),
        vec![Effect::AlwaysAllow {
            pin,
            tool: "mcp__notes__delete_note".into(),
            digest: 1,
        }]
    );
    assert_eq!(reply.await.ok(), Some(ApprovalDecision::AllowAlways));
    assert!(!app.overlays.approval_confirm);
}

#[test]
fn the_ledger_revokes_a_rule_through_the_file_and_takes_the_written_rules() {
    use crate::config::ApprovalRule;
    use crate::tui::messages::{AppEvent, Effect, Level};
    use crate::tui::modals::ledger::LedgerRow;
    use crossterm::event::KeyCode;
    let (mut app, _) = populated();
    app.overlays.modal = Some(Modal::Ledger {
        entries: vec![LedgerRow::Rule {
            index: 3,
            rule: ApprovalRule::allow_tool("bash", None),
            from: None,
        }],
        selected: 0,
        asking: false,
    });
    // `d` asks first (the rule is in the config file); another key takes it back.
    assert!(app.on_key(key(KeyCode::Char('d'))).is_empty());
    let asked = app.notice.clone().map(|(_, text)| text).unwrap_or_default();
    assert!(
        asked.contains("d again removes policy.rules[3]") && asked.contains("allow rule"),
        "{asked}"
    );
    app.on_key(key(KeyCode::Down));
    assert!(app.notice.is_none());
    assert!(app.on_key(key(KeyCode::Char('d'))).is_empty());
    assert_eq!(
        app.on_key(key(KeyCode::Char('d'))),
        vec![Effect::RemoveRule {
            index: 3,
            digest: 1
        }]
    );
    app.on_app_event(AppEvent::RulesWritten {
        done: "removed policy.rules[3] from the config file".into(),
        result: Ok((77, Vec::new())),
    });
    assert_eq!(app.session.config_digest, 77);
    assert_eq!(
        app.notice,
        Some((
            Level::Info,
            "removed policy.rules[3] from the config file".into()
        ))
    );
    app.on_app_event(AppEvent::RulesWritten {
        done: String::new(),
        result: Err("changed on disk since it was loaded".into()),
    });
    assert_eq!(app.session.config_digest, 77);
    assert!(matches!(app.notice, Some((Level::Error, _))));
}

#[tokio::test]
async fn always_allow_is_refused_where_an_ask_rule_decides_and_spared_where_a_rule_allows() {
    use crate::approval::ApprovalDecision;
    use crate::config::{ApprovalRule, PolicyConfig, RuleDecision, ToolPattern};
    use crate::runtime::{AgentRuntimeFactory, RuntimeOptions};
    use crate::tui::app::RuntimeState;
    use crossterm::event::KeyCode;
    use std::sync::Arc;
    let policy = PolicyConfig {
        rules: vec![
            ApprovalRule {
                pin: None,
                pattern: ToolPattern {
                    tool: Some("mcp__notes__*".into()),
                    server: None,
                },
                decision: RuleDecision::Ask,
            },
            ApprovalRule::allow_tool("mcp__notes-trusted__write_note", None),
        ],
        ..PolicyConfig::default()
    };
    let config = crate::config::Config::from_servers(Vec::new(), policy);
    let (events, _stream) = AgentRuntimeFactory::events();
    let options = RuntimeOptions {
        local_tools: false,
        ..RuntimeOptions::default()
    };
    let runtime = AgentRuntimeFactory::create(&config, options, events)
        .await
        .expect("runtime");
    let (mut app, _) = populated();
    app.session.runtime = RuntimeState::Ready(Arc::new(runtime));

    let (asked, _reply) =
        ApprovalRequest::new(1, ignored("notes", "delete_note"), json!({}), "why".into());
    app.on_runtime_event(RuntimeEvent::ApprovalRequested(asked));
    assert!(app.on_key(key(KeyCode::Char('A'))).is_empty());
    assert!(!app.overlays.approval_confirm, "not even asked once more");
    assert_eq!(app.overlays.approvals.len(), 1, "the question stays");
    assert!(app
        .notice
        .as_ref()
        .is_some_and(|(_, t)| t.starts_with("policy.rules[0] (tool mcp__notes__*) says ask")));
    app.overlays.approvals.clear();

    let write = descriptor(
        "notes-trusted",
        "write_note",
        SideEffectLevel::Mutating,
        false,
        AnnotationTrust::Trust,
        "t",
    );
    let (request, reply) = ApprovalRequest::new(2, write, json!({}), "why".into());
    app.on_runtime_event(RuntimeEvent::ApprovalRequested(request));
    assert!(
        app.on_key(key(KeyCode::Char('A'))).is_empty(),
        "nothing to write"
    );
    assert_eq!(reply.await.ok(), Some(ApprovalDecision::AllowOnce));
    assert!(app.notice.as_ref().is_some_and(|(_, t)| t
        .contains("policy.rules[1] (tool mcp__notes-trusted__write_note) already allows it")));
    if let Some(rt) = app.runtime() {
        rt.close().await;
    }
}

#[test]
fn ctrl_u_empties_the_tool_filter() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let (mut app, _) = populated();
    app.set_focus(Pane::Tools);
    app.on_key(key(KeyCode::Char('/')));
    for c in "write".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    assert_eq!(app.panes.tools.filter, "write");
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    assert_eq!(app.panes.tools.filter, "", "Ctrl-U is not a literal u");
    for c in "echo".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    assert_eq!(app.panes.tools.filter, "echo");
    assert!(app.panes.tools.filter_editing);
    crate::tui::tests::snapshot("tools_filter_after_ctrl_u", &app);
}

/// Progress notices end with what they wait for; manual restarts, trust writes and a crashed
/// server's return are in Events.
#[test]
fn stale_notices_clear_and_actions_reach_events() {
    use crate::runtime::{CallStatus, McpEvent};
    use crate::tool::ToolResult;
    use crate::tui::messages::AppEvent;
    use crossterm::event::KeyCode;
    let last_event = |app: &crate::tui::app::App| {
        let row = app.events.rows.back().expect("an event");
        (row.server.clone(), row.text.clone())
    };
    let (mut app, _) = populated();
    app.set_focus(Pane::Calls);
    app.panes.calls.selected = 5; // #6, running
    app.on_key(key(KeyCode::Char('c')));
    assert_eq!(app.notice.as_ref().unwrap().1, "cancelling call #6…");
    app.on_runtime_event(RuntimeEvent::CallFinished {
        id: 6,
        status: CallStatus::Cancelled,
        result: ToolResult::error("cancelled"),
        elapsed_ms: 5,
    });
    assert_eq!(app.notice.as_ref().unwrap().1, "call #6 ended: cancelled");

    app.set_focus(Pane::Servers);
    app.on_key(key(KeyCode::Char('r')));
    assert_eq!(
        last_event(&app),
        ("notes".into(), "restart asked by the operator (r)".into())
    );
    app.on_app_event(AppEvent::TrustWritten {
        server: "notes".into(),
        trust: AnnotationTrust::Trust,
        result: Ok(7),
    });
    assert!(last_event(&app)
        .1
        .starts_with("annotation_trust: trust written"));

    // A crash, then the supervisor's restart: `ready again`.
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ServerDown {
        server: "notes".into(),
        exit: None,
        reason: "the server exited".into(),
        at: std::time::UNIX_EPOCH,
        uptime: std::time::Duration::from_secs(1),
        crashes: 1,
        restart: crate::config::RestartPolicy::OnFailure,
    }));
    let report = crate::tui::tests::fixtures::ready_report("notes");
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ServerStarted(Box::new(report))));
    assert_eq!(last_event(&app), ("notes".into(), "ready again".into()));

    // R: the notice stays until every server has started again, then says how it went.
    app.on_app_event(AppEvent::Restarting(
        1,
        Ok(Box::new(crate::tui::tests::fixtures::config())),
    ));
    assert_eq!(
        app.notice.as_ref().unwrap().1,
        crate::tui::app::RESTARTING_ALL
    );
    for name in ["notes", "notes-trusted", "broken"] {
        let report = crate::tui::tests::fixtures::ready_report(name);
        app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ServerStarted(Box::new(report))));
        assert_eq!(
            app.notice.as_ref().unwrap().1,
            crate::tui::app::RESTARTING_ALL
        );
    }
    let report = crate::tui::tests::fixtures::ready_report("slow-start");
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ServerStarted(Box::new(report))));
    assert_eq!(
        app.notice.as_ref().unwrap().1,
        "every server restarted: 4/4 ready"
    );
    assert_eq!(
        last_event(&app),
        ("".into(), "every server restarted: 4/4 ready".into())
    );
}

/// Ctrl-C over an approval asks to quit on top of it (it did nothing visible before): `n`
/// goes back to the approval, a second Ctrl-C quits.
#[test]
fn ctrl_c_over_an_approval_asks_to_quit_on_top_of_it() {
    use crate::tui::tests::draw;
    use crate::tui::tests::fixtures::ctrl;
    use crossterm::event::KeyCode;
    let (mut app, _) = populated();
    let (request, _) = ApprovalRequest::new(
        7,
        ignored("notes", "write_note"),
        json!({"title": "t"}),
        "mcp__notes__write_note is mutating".into(),
    );
    app.on_runtime_event(RuntimeEvent::ApprovalRequested(request));
    assert!(app.on_key(ctrl('c')).is_empty());
    let screen = draw(&app, (80, 24));
    assert!(screen.contains("Quit?"), "{screen}");
    app.on_key(key(KeyCode::Char('n')));
    assert!(app.overlays.modal.is_none() && !app.should_quit());
    assert_eq!(app.overlays.approvals.len(), 1, "the approval still waits");
    let screen = draw(&app, (80, 24));
    assert!(
        screen.contains("Approval needed") && !screen.contains("Quit?"),
        "{screen}"
    );
    app.on_key(ctrl('c'));
    assert_eq!(
        app.on_key(ctrl('c')),
        vec![crate::tui::messages::Effect::Quit]
    );
}

/// The footer offers a key only where it applies to the selected row: `c cancel` for a call
/// still running, `End follow` once the Events pane is scrolled away from its end, `l log
/// level` for a server that is up and offers logging (`l` on one that is not says why, and
/// sends nothing).
#[test]
fn footer_keys_follow_the_selected_row() {
    use crossterm::event::KeyCode;
    let (mut app, _) = populated();
    let footer = |app: &crate::tui::app::App| {
        let screen = crate::tui::tests::draw(app, (140, 40));
        screen.lines().rev().take(2).collect::<Vec<_>>().join("\n")
    };
    app.focus = Pane::Calls;
    let running = app
        .calls
        .rows
        .iter()
        .position(|r| !r.status.is_final())
        .expect("a running call");
    let ended = app
        .calls
        .rows
        .iter()
        .position(|r| r.status.is_final())
        .expect("an ended call");
    app.panes.calls.selected = running;
    assert!(footer(&app).contains("c cancel"), "{}", footer(&app));
    app.panes.calls.selected = ended;
    assert!(!footer(&app).contains("c cancel"), "{}", footer(&app));

    app.focus = Pane::Events;
    app.panes.events.selected = None;
    assert!(!footer(&app).contains("End follow"), "{}", footer(&app));
    app.panes.events.selected = Some(0);
    assert!(footer(&app).contains("End follow"), "{}", footer(&app));

    app.focus = Pane::Servers;
    let notes = app
        .servers
        .iter()
        .position(|s| s.name == "notes")
        .expect("notes");
    app.panes.servers.selected = notes;
    // Up, but it did not say it logs.
    assert!(!footer(&app).contains("l log level"), "{}", footer(&app));
    if let Some(report) = app.servers[notes].report.as_mut() {
        report.capabilities = Some(crate::runtime::Capabilities {
            logging: true,
            ..Default::default()
        });
    }
    assert!(footer(&app).contains("l log level"), "{}", footer(&app));
    assert!(!app.on_key(key(KeyCode::Char('l'))).is_empty());
    let failed = app
        .servers
        .iter()
        .position(|s| s.name == "broken")
        .expect("the failed server");
    app.panes.servers.selected = failed;
    assert!(!footer(&app).contains("l log level"), "{}", footer(&app));
    assert!(app.on_key(key(KeyCode::Char('l'))).is_empty());
    assert!(
        app.notice
            .as_ref()
            .is_some_and(|(_, t)| t == "broken is not running: no log level to set"),
        "{:?}",
        app.notice
    );
}

#[test]
fn on_a_narrow_screen_the_approval_choices_wrap_whole() {
    let (mut app, _) = populated();
    let (request, _reply) = ApprovalRequest::new(
        1,
        trusted_write_note(),
        json!({"title": "t", "body": "b"}),
        "policy.approval is ask_mutating".into(),
    );
    app.on_runtime_event(RuntimeEvent::ApprovalRequested(request));
    let screen = crate::tui::tests::draw(&app, (60, 18));
    // Every choice is inside the modal, none cut at its edge.
    let modal: Vec<&str> = screen
        .lines()
        .skip_while(|l| !l.contains("Approval needed"))
        .take_while(|l| !l.contains('└'))
        .collect();
    let inside = modal.join("\n");
    for choice in [
        "y allow once",
        "a allow this tool for the session",
        "A always",
        "n/Esc deny",
    ] {
        assert!(inside.contains(choice), "{choice}: {screen}");
    }
    // The arguments above them are still whole.
    assert!(inside.contains("\"title\": \"t\""), "{screen}");
}

/// A yes in one burst with the key before it (a paste, typing into the wrong pane) does not
/// confirm the question that key opened; one after a pause does.
#[test]
fn a_yes_in_a_burst_of_keys_confirms_nothing() {
    use crossterm::event::KeyCode;
    let (mut app, _) = populated();
    let t0 = std::time::Instant::now();
    let at = |ms| t0 + std::time::Duration::from_millis(ms);
    app.key_came(at(0));
    app.on_key(key(KeyCode::Char('q')));
    assert!(app.overlays.quit_asked);
    app.key_came(at(5));
    assert!(app.on_key(key(KeyCode::Char('y'))).is_empty());
    assert!(!app.should_quit());
    assert!(app
        .notice
        .as_ref()
        .is_some_and(|(_, t)| t.contains("in one burst")));
    app.key_came(at(800));
    assert_eq!(
        app.on_key(key(KeyCode::Char('y'))),
        vec![crate::tui::messages::Effect::Quit]
    );
}
