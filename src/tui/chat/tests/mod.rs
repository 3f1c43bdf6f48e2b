//! The Conversation pane, its keys and the agent's side of the approval modal: snapshots at
//! 80×24 and 140×40 from the same events the agent task and the runtime send, with a fixed
//! clock; the keys' effects; a call tied to its row in Calls whichever event comes first;
//! nothing the model writes reaching the terminal unsanitized.

mod calls;
mod keys;
mod pick;

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use serde_json::json;
use tokio::sync::mpsc;

use crate::agent::turn::Usage;
use crate::agent::{
    AgentEvent, ModelError, ModelFailureClass, PromptOutcome, PromptReport, ToolCallStatus,
};
use crate::approval::{AnsweredBy, ApprovalDecision, ApprovalRequest, CallOrigin};
use crate::config::{AgentConfig, Config, ModelEndpoint, ModelProfile};
use crate::runtime::{CallStatus, RuntimeEvent};
use crate::tool::ToolResult;
use crate::tui::app::App;
use crate::tui::chat::{AgentCommand, AgentStatus, ChatEffect, ChatEvent};
use crate::tui::messages::AppEvent;
use crate::tui::pane_state::Pane;
use crate::tui::tests::fixtures::{config, populated, trusted_write_note};
pub(in crate::tui) use crate::tui::tests::fixtures::{ctrl, key};
use crate::tui::tests::{draw, snapshot};
use crate::tui::theme::Theme;

fn agent() -> AgentConfig {
    let mut demo = ModelProfile::url("demo", "http://127.0.0.1:1/v1", "demo");
    demo.endpoint = ModelEndpoint::Command {
        command: "/usr/bin/aimon-console".into(),
        args: vec![
            "demo-model".into(),
            "--prefer-server".into(),
            "notes-trusted".into(),
        ],
        env: Default::default(),
        cwd: None,
    };
    let local = ModelProfile::url("local", "http://127.0.0.1:8080/v1", "SmolLM2-135M-Instruct");
    AgentConfig {
        default: "demo".into(),
        profiles: [("demo".to_string(), demo), ("local".to_string(), local)]
            .into_iter()
            .collect(),
    }
}

pub(in crate::tui) fn agent_config() -> Config {
    Config {
        agent: Some(agent()),
        ..config()
    }
}

/// A model client for `base_url` (nothing is sent unless a test asks).
pub(in crate::tui) fn client(base_url: &str) -> std::sync::Arc<crate::agent::HttpModelClient> {
    let profile = ModelProfile::url("t", base_url, "demo");
    std::sync::Arc::new(crate::agent::HttpModelClient::new(&profile, base_url).unwrap())
}

pub(in crate::tui) fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
}

/// The agent of epoch 1 ready, its commands going to the returned receiver.
pub(in crate::tui) fn ready(app: &mut App) -> mpsc::UnboundedReceiver<AgentCommand> {
    app.chat.restart("demo".into(), None);
    let (tx, rx) = mpsc::unbounded_channel();
    let epoch = app.chat.epoch;
    app.on_app_event(AppEvent::Agent(
        epoch,
        ChatEvent::Ready {
            commands: tx,
            records: Vec::new(),
            base_url: "http://127.0.0.1:41234/v1".into(),
            client: Some(crate::tui::chat::tests::client("http://127.0.0.1:41234/v1")),
        },
    ));
    app.on_app_event(AppEvent::Agent(
        epoch,
        ChatEvent::Session("20261130-205100-3f2a".into()),
    ));
    rx
}

pub(in crate::tui) fn agent_event(app: &mut App, event: AgentEvent) {
    let epoch = app.chat.epoch;
    app.on_app_event(AppEvent::Agent(epoch, ChatEvent::Event(event)));
}

pub(in crate::tui) fn tool_call(
    app: &mut App,
    turn: u32,
    call_id: &str,
    tool: &str,
    arguments: &str,
    reason: &str,
) {
    agent_event(
        app,
        AgentEvent::ToolCall {
            turn,
            call_id: call_id.into(),
            tool: tool.into(),
            arguments: arguments.into(),
            reason: reason.into(),
        },
    );
}

pub(in crate::tui) fn started(app: &mut App, id: u64, tool: &str, reason: &str) {
    app.on_runtime_event(RuntimeEvent::CallStarted {
        id,
        tool: tool.into(),
        arguments: json!({}),
        origin: CallOrigin::Agent {
            reason: reason.into(),
        },
    });
}

pub(super) fn finished(app: &mut App, id: u64, status: CallStatus, text: &str, ms: u64) {
    app.on_runtime_event(RuntimeEvent::CallFinished {
        id,
        status,
        result: ToolResult::ok(text),
        elapsed_ms: ms,
    });
}

fn turn_ended(app: &mut App, turn: u32, ms: u64, tokens: (u64, u64), reason: &str) {
    agent_event(
        app,
        AgentEvent::TurnEnded {
            turn,
            finish_reason: Some(reason.into()),
            usage: Some(Usage {
                input_tokens: tokens.0,
                output_tokens: tokens.1,
                cached_input_tokens: 0,
            }),
            latency: Duration::from_millis(ms),
        },
    );
}

/// A conversation: a save approved, an add, a made-up tool, a model error and its hint, then
/// a prompt in flight with its write waiting for approval and a slow call running.
pub(super) fn conversation() -> (App, Instant) {
    let (base, t0) = populated();
    let mut app = App::new(&agent_config(), Theme::plain(), t0);
    app.servers = base.servers;
    app.tools = base.tools;
    app.set_now(t0);
    let _rx = ready(&mut app);
    type_text(&mut app, "save a note called demo saying hello");
    app.on_key(key(KeyCode::Enter));
    let write = "mcp__notes-trusted__write_note";
    let reason = "(demo model) I will save the note \"demo\".";
    agent_event(
        &mut app,
        AgentEvent::TurnStarted {
            turn: 1,
            tools: Default::default(),
        },
    );
    for piece in ["(demo model) I will ", "save the note \"demo\"."] {
        agent_event(
            &mut app,
            AgentEvent::TextDelta {
                turn: 1,
                text: piece.into(),
            },
        );
    }
    turn_ended(&mut app, 1, 412, (3884, 26), "tool_calls");
    // The runtime's event first, the agent's second: still one line, #8.
    started(&mut app, 8, write, reason);
    tool_call(
        &mut app,
        1,
        "call_0",
        write,
        r#"{"title":"demo","body":"hello"}"#,
        reason,
    );
    app.on_runtime_event(RuntimeEvent::ApprovalAnswered {
        id: 8,
        decision: ApprovalDecision::AllowOnce,
        by: AnsweredBy::Operator,
    });
    finished(&mut app, 8, CallStatus::Ok, "saved note \"demo\"", 4);
    agent_event(
        &mut app,
        AgentEvent::ToolResult {
            turn: 1,
            call_id: "call_0".into(),
            tool: write.into(),
            runtime_id: Some(8),
            status: ToolCallStatus::Ok,
            content: "saved note \"demo\"".into(),
        },
    );
    agent_event(
        &mut app,
        AgentEvent::TextDelta {
            turn: 2,
            text: "(demo model) Done: saved note \"demo\".".into(),
        },
    );
    turn_ended(&mut app, 2, 3, (3963, 10), "stop");
    agent_event(
        &mut app,
        AgentEvent::Answer {
            text: String::new(),
        },
    );
    done(&mut app);

    type_text(&mut app, "launch the rockets");
    app.on_key(key(KeyCode::Enter));
    tool_call(
        &mut app,
        1,
        "call_0",
        "mcp__nowhere__launch_rockets",
        "{}",
        "",
    );
    agent_event(
        &mut app,
        AgentEvent::ToolResult {
            turn: 1,
            call_id: "call_0".into(),
            tool: "mcp__nowhere__launch_rockets".into(),
            runtime_id: None,
            status: ToolCallStatus::UnknownTool,
            content: "error: no such tool".into(),
        },
    );
    agent_event(
        &mut app,
        AgentEvent::Retrying {
            turn: 2,
            attempt: 1,
            max: 3,
            delay: Duration::from_secs(2),
            error: ModelError::new(ModelFailureClass::RateLimited, "HTTP 429: slow down"),
        },
    );
    agent_event(
        &mut app,
        AgentEvent::RetryCountdown {
            turn: 2,
            remaining: Duration::from_secs(1),
        },
    );
    let error = ModelError::new(ModelFailureClass::RateLimited, "HTTP 429: slow down")
        .with_hint("wait, then try again");
    agent_event(
        &mut app,
        AgentEvent::Stopped {
            outcome: PromptOutcome::ModelFailed(error.clone()),
            message: error.to_string(),
        },
    );
    done(&mut app);

    // In flight: the write waits for approval, a slow call runs.
    type_text(
        &mut app,
        "save a note called plan saying ship it, then wait 20 seconds",
    );
    app.on_key(key(KeyCode::Enter));
    agent_event(
        &mut app,
        AgentEvent::TurnStarted {
            turn: 1,
            tools: Default::default(),
        },
    );
    let reason = "(demo model) Saving the plan, then waiting.";
    agent_event(
        &mut app,
        AgentEvent::TextDelta {
            turn: 1,
            text: reason.into(),
        },
    );
    turn_ended(&mut app, 1, 5, (4101, 30), "tool_calls");
    tool_call(
        &mut app,
        1,
        "call_0",
        write,
        r#"{"title":"plan","body":"ship it"}"#,
        reason,
    );
    tool_call(
        &mut app,
        1,
        "call_1",
        "mcp__notes-trusted__slow",
        r#"{"steps":200,"step_ms":100}"#,
        reason,
    );
    app.set_now(t0 + Duration::from_millis(500));
    started(&mut app, 9, write, reason);
    started(&mut app, 10, "mcp__notes-trusted__slow", reason);
    app.on_runtime_event(RuntimeEvent::CallStatus {
        id: 9,
        status: CallStatus::AwaitingApproval,
    });
    app.on_runtime_event(RuntimeEvent::CallStatus {
        id: 10,
        status: CallStatus::Running,
    });
    app.chat.input.insert_str("and then\ntell me how it went");
    app.set_now(t0 + Duration::from_millis(2_300));
    (app, t0)
}

pub(in crate::tui) fn done(app: &mut App) {
    let epoch = app.chat.epoch;
    app.on_app_event(AppEvent::Agent(
        epoch,
        ChatEvent::Done(PromptReport {
            outcome: PromptOutcome::Cancelled,
            turns: 1,
            tool_failures: 0,
            usage: Usage::default(),
        }),
    ));
}

#[test]
fn conversation_pane() {
    let (app, _) = conversation();
    assert_eq!(app.focus, Pane::Conversation);
    snapshot("conversation", &app);
}

#[test]
fn conversation_with_tools_focused_and_the_compact_tabs() {
    let (mut app, _) = conversation();
    app.focus = Pane::Tools;
    snapshot("conversation_tools_focused", &app);
}

#[test]
fn approval_of_an_agent_call_says_who_asked_when_and_why() {
    let (mut app, t0) = conversation();
    let (request, _rx) = ApprovalRequest::new(
        9,
        trusted_write_note(),
        json!({"title": "plan", "body": "ship it"}),
        "mcp__notes-trusted__write_note is mutating; policy.approval is ask_mutating".into(),
    );
    let request = request.with_origin(CallOrigin::Agent {
        reason: "(demo model) Saving the plan, then waiting.".into(),
    });
    app.set_now(t0 + Duration::from_millis(600));
    app.on_runtime_event(RuntimeEvent::ApprovalRequested(request));
    app.set_now(t0 + Duration::from_millis(2_300));
    for size in [(80, 24), (140, 40)] {
        let screen = draw(&app, size);
        assert!(
            screen.contains("by the agent, in model turn 1, 1.7s ago"),
            "{screen}"
        );
        assert!(
            screen.contains("Saving the plan, then waiting."),
            "{screen}"
        );
        assert!(screen.contains("MUTATING"), "{screen}");
    }
    snapshot("approval_agent", &app);
}

#[test]
fn profile_picker() {
    let (mut app, _) = conversation();
    app.chat.turn = None;
    app.on_key(ctrl('p'));
    assert_eq!(app.chat.picker, Some(0));
    snapshot("profile_picker", &app);
    // Down, Enter: `local` is the profile; with a runtime, its agent starts at once,
    // continuing the session (here, with none, when the runtime is ready).
    app.on_key(key(KeyCode::Down));
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    assert_eq!(app.chat.profile.as_deref(), Some("local"));
    assert!(app.chat.picker.is_none());
    assert_eq!(
        app.chat.restart("local".into(), app.chat.session.clone()),
        ChatEffect::Start {
            epoch: 2,
            profile: "local".into(),
            resume: Some("20261130-205100-3f2a".into()),
        }
    );
    assert_eq!(app.chat.status, AgentStatus::Starting);
}

/// The model's text in the pane's entries, one string per `Model` entry.
fn model_texts(chat: &crate::tui::chat::ChatState) -> Vec<String> {
    chat.entries
        .iter()
        .filter_map(|e| match e {
            crate::tui::chat::Entry::Model { text, .. } => Some(text.lines.join("\n")),
            crate::tui::chat::Entry::Prompt(_)
            | crate::tui::chat::Entry::Call(_)
            | crate::tui::chat::Entry::Turn { .. }
            | crate::tui::chat::Entry::Retry { .. }
            | crate::tui::chat::Entry::Note { .. } => None,
        })
        .collect()
}

/// Two model turns as the loop reports them: the first says something and calls `add`, the
/// second answers. `streamed`: the text came as deltas (else whole, in one piece, as the loop
/// sends a reply that did not stream).
fn two_turns(chat: &mut crate::tui::chat::ChatState, streamed: bool) {
    let now = Instant::now();
    let said = "(demo model) I will add 2 and 3.";
    let answer = "(demo model) 2 plus 3 is 5.";
    for (turn, text) in [(1, said), (2, answer)] {
        let tools = vec!["mcp__notes__add".to_string()].into();
        chat.on_agent_event(AgentEvent::TurnStarted { turn, tools }, now);
        let pieces: Vec<&str> = if streamed {
            text.split_inclusive(' ').collect()
        } else {
            vec![text]
        };
        for piece in pieces {
            let text = piece.to_string();
            chat.on_agent_event(AgentEvent::TextDelta { turn, text }, now);
        }
        let ended = AgentEvent::TurnEnded {
            turn,
            finish_reason: None,
            usage: None,
            latency: Duration::from_millis(5),
        };
        chat.on_agent_event(ended, now);
        if turn == 1 {
            let call = AgentEvent::ToolCall {
                turn,
                call_id: "call_0".into(),
                tool: "mcp__notes__add".into(),
                arguments: "{\"a\":2,\"b\":3}".into(),
                reason: said.into(),
            };
            chat.on_agent_event(call, now);
        }
    }
    chat.on_agent_event(
        AgentEvent::Answer {
            text: answer.into(),
        },
        now,
    );
}

#[test]
fn a_whole_reply_is_shown_once_streamed_or_not() {
    let expected = [
        "(demo model) I will add 2 and 3.",
        "(demo model) 2 plus 3 is 5.",
    ];
    for streamed in [false, true] {
        let mut chat = crate::tui::chat::ChatState::new(Some(&agent()));
        two_turns(&mut chat, streamed);
        assert_eq!(model_texts(&chat), expected, "streamed: {streamed}");
    }
}

/// A call's time in the conversation is its run, as in Calls, the wait for the operator said
/// apart: `ok 200ms (allowed once by you after 2.5s)`, not the 2.7s from asking to its end.
/// Typing on after a prompt is sent: an approval that comes meanwhile does not take the
/// typed `y` (or `A`, which would write a rule) as its answer; once the typing stops for a
/// moment, `y` answers it.
#[tokio::test]
async fn typing_on_does_not_answer_an_approval_that_pops_up() {
    let t0 = Instant::now();
    let mut app = App::new(&agent_config(), Theme::plain(), t0);
    app.set_now(t0);
    let _rx = ready(&mut app);
    type_text(&mut app, "save a note called t saying yes");
    app.on_key(key(KeyCode::Enter));
    // The operator types on; the question comes 100 ms after the last key.
    app.set_now(t0 + Duration::from_millis(200));
    type_text(&mut app, "and y");
    let (request, reply) = ApprovalRequest::new(
        1,
        trusted_write_note(),
        json!({"title": "t", "body": "yes"}),
        "policy.approval is ask_mutating".into(),
    );
    app.set_now(t0 + Duration::from_millis(300));
    app.on_runtime_event(RuntimeEvent::ApprovalRequested(request));
    for (at, c) in [(350, 'y'), (500, 'A'), (800, 'y')] {
        app.set_now(t0 + Duration::from_millis(at));
        app.on_key(key(KeyCode::Char(c)));
        assert_eq!(
            app.overlays.approvals.len(),
            1,
            "{c} at {at} ms answered it"
        );
    }
    assert!(
        app.notice
            .as_ref()
            .is_some_and(|(_, t)| t.contains("you were typing when this question came")),
        "{:?}",
        app.notice
    );
    // A pause, then an answer.
    app.set_now(t0 + Duration::from_millis(1_500));
    app.on_key(key(KeyCode::Char('y')));
    assert!(app.overlays.approvals.is_empty());
    assert_eq!(reply.await.ok(), Some(ApprovalDecision::AllowOnce));
}
