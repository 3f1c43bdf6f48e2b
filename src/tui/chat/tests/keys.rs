//! The Conversation pane's behaviour: what Enter, Esc, Tab and the history keys do, a prompt
//! typed before the agent is ready, a resumed session, stale reports, a long answer drawn by
//! its tail, and nothing the model writes reaching the terminal unsanitized.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tokio::sync::mpsc;

use super::{agent_config, agent_event, ctrl, done, key, ready, started, tool_call, type_text};
use crate::agent::transcript::Record;
use crate::agent::turn::ToolCall;
use crate::agent::{AgentEvent, PromptOutcome, ToolCallStatus};
use crate::approval::{AnsweredBy, ApprovalDecision};
use crate::tui::app::App;
use crate::tui::chat::{AgentStatus, ChatEffect, ChatEvent, Entry};
use crate::tui::messages::{AppEvent, Effect};
use crate::tui::pane_state::Pane;
use crate::tui::tests::draw;
use crate::tui::tests::fixtures::config;
use crate::tui::theme::Theme;

/// Alt-digit picks a pane from the Conversation's input (a plain digit is typed there), and
/// from the Tools filter line; the text typed stays where it was.
#[test]
fn alt_digit_switches_panes_from_the_input_and_a_plain_digit_is_typed() {
    let alt = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT);
    let mut app = App::new(&agent_config(), Theme::plain(), Instant::now());
    type_text(&mut app, "ab3");
    assert_eq!(
        (app.focus, app.chat.input.text()),
        (Pane::Conversation, "ab3".into())
    );
    app.on_key(alt('3'));
    assert_eq!(app.focus, Pane::Tools);
    app.on_key(key(KeyCode::Char('/')));
    type_text(&mut app, "no1");
    assert_eq!(app.panes.tools.filter, "no1");
    app.on_key(alt('8'));
    assert_eq!(app.focus, Pane::Conversation);
    assert_eq!(app.chat.input.text(), "ab3");
    app.on_key(alt('4'));
    assert_eq!(app.focus, Pane::Calls);
    // Outside the input a plain digit picks too.
    app.on_key(key(KeyCode::Char('5')));
    assert_eq!(app.focus, Pane::Events);
    // Without an agent there is no pane 8.
    let mut plain = App::new(&config(), Theme::plain(), Instant::now());
    plain.on_key(alt('8'));
    assert_eq!(plain.focus, Pane::Servers);
}

#[test]
fn enter_sends_esc_cancels_and_the_input_keeps_its_keys() {
    let mut app = App::new(&agent_config(), Theme::plain(), Instant::now());
    assert_eq!(app.focus, Pane::Conversation);
    // Before the agent is ready, a prompt waits for it.
    type_text(&mut app, "q?12");
    assert!(!app.should_quit(), "q is a letter here");
    assert_eq!(app.chat.input.text(), "q?12");
    assert!(app.overlays.modal.is_none());
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    type_text(&mut app, "x");
    assert_eq!(app.chat.input.text(), "q?12\nx");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    assert_eq!(
        app.chat.turn.as_ref().and_then(|t| t.queued.clone()),
        Some("q?12\nx".into())
    );
    // The agent ready: the prompt that waited goes.
    app.chat.restart("demo".into(), None);
    let (tx, _rx) = mpsc::unbounded_channel();
    let effects = app.on_app_event(AppEvent::Agent(
        1,
        ChatEvent::Ready {
            commands: tx,
            records: Vec::new(),
            base_url: "http://127.0.0.1:1/v1".into(),
            client: Some(super::client("http://127.0.0.1:1/v1")),
        },
    ));
    assert_eq!(
        effects,
        vec![Effect::Agent(ChatEffect::Prompt {
            epoch: 1,
            text: "q?12\nx".into(),
            attachments: Vec::new(),
            prompt: None,
        })]
    );
    done(&mut app);
    type_text(&mut app, "what is 2 plus 3");
    let effects = app.on_key(key(KeyCode::Enter));
    assert_eq!(
        effects,
        vec![Effect::Agent(ChatEffect::Prompt {
            epoch: 1,
            text: "what is 2 plus 3".into(),
            attachments: Vec::new(),
            prompt: None,
        })]
    );
    assert!(app.chat.busy());
    // Another Enter while busy sends nothing.
    type_text(&mut app, "more");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    // Esc cancels the turn.
    assert_eq!(
        app.on_key(key(KeyCode::Esc)),
        vec![Effect::Agent(ChatEffect::Cancel)]
    );
    assert!(app
        .chat
        .turn
        .as_ref()
        .is_some_and(|t| t.cancelled_at.is_some()));
    agent_event(
        &mut app,
        AgentEvent::Stopped {
            outcome: PromptOutcome::Cancelled,
            message: "cancelled by the operator".into(),
        },
    );
    done(&mut app);
    assert!(!app.chat.busy());
    assert!(matches!(
        app.chat.entries.back(),
        Some(Entry::Note { text, .. }) if text.starts_with("cancelled by the operator: the turn ended")
    ));
    // Up recalls the prompt sent; Tab leaves the pane; 8 comes back.
    app.chat.input.clear();
    app.on_key(key(KeyCode::Up));
    assert_eq!(app.chat.input.text(), "what is 2 plus 3");
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.focus, Pane::Servers);
    app.on_key(key(KeyCode::Char('8')));
    assert_eq!(app.focus, Pane::Conversation);
    app.on_paste("pasted\r\ntext");
    assert!(app.chat.input.text().ends_with("pasted\ntext"));
    // Ctrl-N: a new conversation, a new session (its agent starts with the runtime; there
    // is none in this test).
    app.chat.session = Some("20261201-101500-ab12".into());
    assert!(app.on_key(ctrl('n')).is_empty());
    assert!(app.chat.session.is_none());
    assert_eq!(app.chat.entries.len(), 1, "{:?}", app.chat.entries);
    // The session left is named, and how to come back to it.
    let screen = crate::tui::tests::draw(&app, (140, 40));
    assert!(
        screen.contains("the last one is session 20261201-101500-ab12"),
        "{screen}"
    );
    let note = format!("{:?}", app.chat.entries);
    assert!(
        note.contains(&format!(
            "aimon-console --config {} --resume 20261201-101500-ab12",
            app.config_path().display()
        )),
        "{note}"
    );
}

#[test]
fn without_an_agent_there_is_no_conversation_pane() {
    let mut app = App::new(&config(), Theme::plain(), Instant::now());
    assert_eq!(app.focus, Pane::Servers);
    for _ in 0..8 {
        app.on_key(key(KeyCode::Tab));
        assert_ne!(app.focus, Pane::Conversation);
    }
    app.on_key(key(KeyCode::Char('8')));
    assert_ne!(app.focus, Pane::Conversation);
}

#[test]
fn a_resumed_session_shows_as_it_was_with_no_stale_call_ids() {
    let mut app = App::new(&agent_config(), Theme::plain(), Instant::now());
    app.chat
        .start_with(None, Some("20261130-205100-3f2a".into()), None);
    app.chat
        .restart("demo".into(), Some("20261130-205100-3f2a".into()));
    let call = ToolCall {
        id: "c1".into(),
        name: "mcp__notes-trusted__write_note".into(),
        arguments: "{}".into(),
    };
    let records = vec![
        Record::Prompt {
            at_ms: 1,
            text: "save it".into(),
        },
        Record::Assistant {
            turn: 1,
            text: "Saving.".into(),
            reasoning: Vec::new(),
            tool_calls: vec![call.clone()],
            finish_reason: Some("tool_calls".into()),
            usage: None,
            latency_ms: 3,
        },
        Record::ToolCall {
            turn: 1,
            call_id: "c1".into(),
            tool: call.name.clone(),
            arguments: "{}".into(),
            reason: "Saving.".into(),
        },
        Record::Approval {
            call_id: "c1".into(),
            runtime_id: Some(1),
            decision: "allow_once".into(),
            by: "operator".into(),
        },
        Record::ToolResult {
            turn: 1,
            call_id: "c1".into(),
            tool: call.name.clone(),
            runtime_id: Some(1),
            status: "ok".into(),
            content: "saved".into(),
            sent: None,
        },
    ];
    let (tx, _rx) = mpsc::unbounded_channel();
    let epoch = app.chat.epoch;
    app.on_app_event(AppEvent::Agent(
        epoch,
        ChatEvent::Ready {
            commands: tx,
            records,
            base_url: "http://x/v1".into(),
            client: Some(super::client("http://x/v1")),
        },
    ));
    let line = app.chat.entries.iter().find_map(|e| match e {
        Entry::Call(l) => Some(l.clone()),
        _ => None,
    });
    let line = line.expect("the call");
    assert_eq!(line.runtime_id, None);
    assert_eq!(line.result, Some(ToolCallStatus::Ok));
    assert_eq!(
        line.approval,
        Some((ApprovalDecision::AllowOnce, AnsweredBy::Operator))
    );
    // A new runtime's call #1 is not this line's.
    started(&mut app, 1, "mcp__notes-trusted__write_note", "");
    assert!(app.chat.line_by_runtime_id(1).is_none());
    app.chat.input.up();
    assert_eq!(app.chat.input.text(), "save it");
    let screen = draw(&app, (140, 40));
    assert!(
        screen.contains("resumed session 20261130-205100-3f2a (1 prompt)"),
        "{screen}"
    );
}

#[test]
fn nothing_the_model_writes_reaches_the_terminal() {
    let mut app = App::new(&agent_config(), Theme::plain(), Instant::now());
    let _rx = ready(&mut app);
    type_text(&mut app, "hi");
    app.on_key(key(KeyCode::Enter));
    for piece in [
        "evil \x1b]0;pw",
        "ned\x07 \x1b[2Jtext\x1b[31",
        "m red\r\n\x07done",
    ] {
        agent_event(
            &mut app,
            AgentEvent::TextDelta {
                turn: 1,
                text: piece.into(),
            },
        );
    }
    tool_call(
        &mut app,
        1,
        "c",
        "mcp__x__\x1b[31mevil",
        "{\"a\":\"\x1b]0;t\x07\"}",
        "",
    );
    for size in [(80, 24), (140, 40)] {
        let screen = draw(&app, size);
        assert!(!screen.contains('\x1b'), "{screen}");
        assert!(!screen.contains('\x07'), "{screen}");
        assert!(screen.contains("evil"), "{screen}");
        assert!(screen.contains("done"), "{screen}");
    }
}

#[test]
fn a_long_answer_draws_only_its_tail() {
    let mut app = App::new(&agent_config(), Theme::plain(), Instant::now());
    let _rx = ready(&mut app);
    type_text(&mut app, "tell me a story");
    app.on_key(key(KeyCode::Enter));
    let words = crate::demo::long_answer(100_000);
    for chunk in words.as_bytes().chunks(4096) {
        agent_event(
            &mut app,
            AgentEvent::TextDelta {
                turn: 1,
                text: String::from_utf8_lossy(chunk).into_owned(),
            },
        );
    }
    // One entry for the whole answer; its last words at the bottom of the pane.
    assert_eq!(
        app.chat
            .entries
            .iter()
            .filter(|e| matches!(e, Entry::Model { .. }))
            .count(),
        1
    );
    let screen = draw(&app, (140, 40));
    assert!(screen.contains("demo model, word by word"), "{screen}");
    // PgUp scrolls back a page (the transcript's height less a row), PgDn returns.
    let height = app.chat.shown.get().height;
    assert!(height > 5, "{height}");
    app.on_key(key(KeyCode::PageUp));
    assert_eq!(app.chat.scroll, height - 1);
    assert!(draw(&app, (140, 40)).contains("rows up (PgDn goes back)"));
    app.on_key(key(KeyCode::PageDown));
    assert_eq!(app.chat.scroll, 0);
}

/// A console whose agent was asked to "count" and answered 60 lines, in one piece.
fn counted_to_sixty() -> (App, mpsc::UnboundedReceiver<crate::tui::chat::AgentCommand>) {
    let mut app = App::new(&agent_config(), Theme::plain(), Instant::now());
    let rx = ready(&mut app);
    type_text(&mut app, "count");
    app.on_key(key(KeyCode::Enter));
    let text: String = (1..=60).map(|i| format!("line {i}\n")).collect();
    agent_event(&mut app, AgentEvent::TextDelta { turn: 1, text });
    (app, rx)
}

#[test]
fn pages_are_the_panes_height_and_stop_at_the_oldest_row() {
    let (mut app, _rx) = counted_to_sixty();
    for (w, h) in [(30, 20), (80, 24), (140, 40)] {
        app.chat.scroll = 0;
        draw(&app, (w, h));
        let height = app.chat.shown.get().height;
        // PgUp to the top: each a page, the last one no further than the oldest row.
        let mut presses = 0;
        while !app.chat.shown.get().at_oldest {
            let before = app.chat.shown.get().scroll;
            app.on_key(key(KeyCode::PageUp));
            draw(&app, (w, h));
            let after = app.chat.shown.get().scroll;
            assert!(after > before && after - before < height, "{w}x{h}");
            presses += 1;
            assert!(presses < 100, "{w}x{h}: never reached the top");
        }
        let screen = draw(&app, (w, h));
        assert!(
            screen.contains("› count"),
            "{w}x{h}: the prompt at the top\n{screen}"
        );
        // More PgUps stay there; the same number of PgDns comes back to the newest.
        app.on_key(key(KeyCode::PageUp));
        draw(&app, (w, h));
        assert!(app.chat.shown.get().at_oldest);
        for _ in 0..presses {
            app.on_key(key(KeyCode::PageDown));
            draw(&app, (w, h));
        }
        assert_eq!(app.chat.scroll, 0, "{w}x{h}");
        // Two PgUps before the next frame are two pages.
        app.on_key(key(KeyCode::PageUp));
        app.on_key(key(KeyCode::PageUp));
        assert_eq!(app.chat.scroll, 2 * (height - 1), "{w}x{h}");
        app.chat.scroll = 0;
        draw(&app, (w, h));
    }
}

#[test]
fn new_text_does_not_move_the_view_while_scrolled_up() {
    let (mut app, _rx) = counted_to_sixty();
    draw(&app, (80, 24));
    app.on_key(key(KeyCode::PageUp));
    // The rows of the transcript on screen (the status line counts the rows below).
    let read = |screen: &str| -> Vec<String> {
        screen
            .lines()
            .filter(|l| l.contains("line "))
            .map(str::to_string)
            .collect()
    };
    let before = read(&draw(&app, (80, 24)));
    assert!(!before.is_empty() && !before.iter().any(|l| l.contains("line 60")));
    // The answer goes on below, a frame between deltas: lines, then one long line that wraps
    // as it grows; then a turn of its own.
    for i in 61..=90 {
        let text = format!("line {i}\n");
        agent_event(&mut app, AgentEvent::TextDelta { turn: 1, text });
        draw(&app, (80, 24));
    }
    for _ in 0..60 {
        let text = "and more words ".to_string();
        agent_event(&mut app, AgentEvent::TextDelta { turn: 1, text });
        draw(&app, (80, 24));
    }
    let text = "line 91, a second turn".to_string();
    agent_event(&mut app, AgentEvent::TextDelta { turn: 2, text });
    let screen = draw(&app, (80, 24));
    assert_eq!(read(&screen), before, "{screen}");
    // PgDn pages down from there, and comes to the newest.
    for _ in 0..20 {
        app.on_key(key(KeyCode::PageDown));
        draw(&app, (80, 24));
    }
    assert_eq!(app.chat.scroll, 0);
    assert!(draw(&app, (80, 24)).contains("line 91, a second turn"));
}

#[test]
fn reports_of_an_old_agent_are_dropped() {
    let mut app = App::new(&agent_config(), Theme::plain(), Instant::now());
    let _rx = ready(&mut app);
    let stale = app.chat.epoch - 1;
    app.on_app_event(AppEvent::Agent(
        stale,
        ChatEvent::Failed("old endpoint died".into()),
    ));
    assert_eq!(app.chat.status, AgentStatus::Ready);
    app.on_app_event(AppEvent::Agent(
        app.chat.epoch,
        ChatEvent::Failed("endpoint_failed: it exited".into()),
    ));
    assert!(matches!(app.chat.status, AgentStatus::Failed(_)));
    type_text(&mut app, "hi");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    assert!(app.notice.is_some());
}

/// A `tools/list_changed` while a prompt is in flight is not taken in under the model's turn
/// (the conversation takes its own boundary between model turns); once the prompt has ended,
/// the console takes it in.
#[test]
fn a_list_change_during_a_prompt_waits_for_the_prompt_to_end() {
    use crate::runtime::{ListKind, RuntimeEvent};
    use crate::tui::tests::fixtures::populated;
    let boundary = |effects: &[Effect]| effects.iter().any(|e| matches!(e, Effect::TurnBoundary));
    let (base, t0) = populated();
    let mut app = App::new(&agent_config(), Theme::plain(), t0);
    app.servers = base.servers;
    app.tools = base.tools;
    let _rx = ready(&mut app);
    let changed = || RuntimeEvent::ListChanged {
        server: "notes".into(),
        list: ListKind::Tools,
    };
    // Between prompts, at once.
    assert!(boundary(&app.on_runtime_event(changed())));
    type_text(&mut app, "what is 2 plus 3");
    app.on_key(key(KeyCode::Enter));
    assert!(app.chat.busy());
    assert!(!boundary(&app.on_runtime_event(changed())));
    let epoch = app.chat.epoch;
    let effects = app.on_app_event(AppEvent::Agent(
        epoch,
        ChatEvent::Done(crate::agent::PromptReport {
            outcome: PromptOutcome::Cancelled,
            turns: 1,
            tool_failures: 0,
            usage: Default::default(),
        }),
    ));
    assert!(boundary(&effects));
}

#[test]
fn quitting_asks_first_while_a_prompt_is_written_or_the_agent_works() {
    let mut app = App::new(&agent_config(), Theme::plain(), Instant::now());
    let _commands = ready(&mut app);
    // Nothing at stake: Ctrl-C quits at once.
    assert_eq!(app.on_key(ctrl('c')), vec![Effect::Quit]);
    let mut app = App::new(&agent_config(), Theme::plain(), Instant::now());
    let _commands = ready(&mut app);
    type_text(&mut app, "half a prompt");
    assert!(app.on_key(ctrl('c')).is_empty());
    assert!(draw(&app, (80, 24)).contains("Quit and lose the prompt you are writing?"));
    app.on_key(key(KeyCode::Char('n')));
    assert!(!app.should_quit());
    assert_eq!(app.chat.input.text(), "half a prompt", "n keeps it");
    // Sent, the agent at work: asked again, and y quits.
    app.on_key(key(KeyCode::Enter));
    assert!(app.chat.busy());
    assert!(app.on_key(ctrl('c')).is_empty());
    assert!(draw(&app, (80, 24)).contains("The agent is at work: quit and cancel its turn?"));
    assert_eq!(app.on_key(key(KeyCode::Char('y'))), vec![Effect::Quit]);
}

#[test]
fn on_a_short_screen_the_input_stays_in_view() {
    let mut app = App::new(&agent_config(), Theme::plain(), Instant::now());
    let _rx = ready(&mut app);
    type_text(&mut app, "visible text");
    for h in [8, 10, 14] {
        let screen = draw(&app, (100, h));
        assert!(screen.contains("› visible text"), "100x{h}\n{screen}");
    }
    // The servers shrink to their title and a row; at 14 rows the transcript has room.
    let screen = draw(&app, (100, 14));
    assert!(screen.contains("Servers 0/4 ready"), "{screen}");
    assert!(app.chat.shown.get().height >= 3, "{screen}");
}

#[test]
fn on_the_large_layout_tab_moves_among_the_panes_on_screen() {
    let mut app = App::new(&agent_config(), Theme::plain(), Instant::now());
    let _rx = ready(&mut app);
    draw(&app, (140, 40));
    let mut order = Vec::new();
    for _ in 0..5 {
        app.on_key(key(KeyCode::Tab));
        order.push(app.focus);
    }
    assert_eq!(
        order,
        [
            Pane::Servers,
            Pane::Details,
            Pane::Calls,
            Pane::Events,
            Pane::Conversation
        ]
    );
    // The conversation stayed in view all along; on the compact layout Tab visits every pane.
    assert_eq!(app.placement.lower_left, Pane::Conversation);
    draw(&app, (80, 24));
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.focus, Pane::Tools);
}
