//! Key and snapshot tests of a server's sampling request in the console: the modal at 80×24 and
//! 140×40 (the request, then the model's answer in its editor), approval asking the agent's
//! model, an edited answer going back only on Ctrl-S, a rejection, and a request that cannot
//! be answered while no model runs. The model's side is `agent::sampling` (tested over a real
//! socket in `tests/agent_sampling.rs`); here its answer arrives as the app event it sends.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use crate::agent::sampling::Sampled;
use crate::agent::HttpModelClient;
use crate::config::{AgentConfig, ModelProfile};
use crate::runtime::{
    McpEvent, RuntimeEvent, SamplingAnswer, SamplingAsk, SamplingMessage, SamplingRequest,
    SamplingRole, SamplingTool,
};
use crate::tui::app::App;
use crate::tui::chat::{ChatEvent, ChatState};
use crate::tui::messages::{AppEvent, Effect};
use crate::tui::tests::fixtures::populated;
use crate::tui::tests::snapshot;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

pub(in crate::tui) fn ask() -> SamplingAsk {
    SamplingAsk {
        messages: vec![
            SamplingMessage {
                role: SamplingRole::User,
                text: "Summarize the notes saved today in one sentence.".into(),
            },
            SamplingMessage {
                role: SamplingRole::Assistant,
                text: "Which notes?".into(),
            },
            SamplingMessage {
                role: SamplingRole::User,
                text: "The ones about the demo.".into(),
            },
        ],
        system_prompt: Some("You are a terse assistant.".into()),
        max_tokens: 100,
        temperature: Some(0.2),
        stop_sequences: vec!["END".into()],
        model_preferences: Some(json!({
            "hints": [{"name": "claude-3-sonnet"}],
            "intelligencePriority": 0.8,
            "speedPriority": 0.5
        })),
        include_context: Some("thisServer".into()),
        tools: vec![SamplingTool {
            name: "lookup".into(),
            description: "Looks a note up.".into(),
            input_schema: json!({"type": "object", "properties": {"title": {"type": "string"}}}),
        }],
        tool_choice: None,
    }
}

/// The populated console with an agent whose model is up.
fn with_model() -> App {
    let (mut app, _) = populated();
    let profile = ModelProfile::url("demo", "http://127.0.0.1:1/v1", "demo-model");
    let agent = AgentConfig {
        default: "demo".into(),
        profiles: [("demo".to_string(), profile.clone())]
            .into_iter()
            .collect(),
    };
    app.chat = ChatState::new(Some(&agent));
    app.chat.restart("demo".into(), None);
    let (tx, _rx) = mpsc::unbounded_channel();
    let client = Arc::new(HttpModelClient::new(&profile, "http://127.0.0.1:1/v1").unwrap());
    let epoch = app.chat.epoch;
    app.on_app_event(AppEvent::Agent(
        epoch,
        ChatEvent::Ready {
            commands: tx,
            records: Vec::new(),
            base_url: "http://127.0.0.1:1/v1".into(),
            client: Some(client),
        },
    ));
    app
}

fn request(app: &mut App, ask: SamplingAsk) -> (u64, oneshot::Receiver<SamplingAnswer>) {
    let (request, answer) = SamplingRequest::new("notes", ask);
    let id = request.id;
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::SamplingRequested(request)));
    (id, answer)
}

async fn answered(rx: oneshot::Receiver<SamplingAnswer>) -> SamplingAnswer {
    tokio::time::timeout(std::time::Duration::from_secs(5), rx)
        .await
        .expect("answered in time")
        .expect("answered")
}

#[tokio::test]
async fn approved_the_model_answers_and_the_edited_answer_goes_back_on_ctrl_s() {
    let mut app = with_model();
    let (id, answer) = request(&mut app, ask());
    snapshot("sampling_request", &app);
    // Nothing runs until the operator approves.
    assert!(app.on_key(key(KeyCode::Down)).is_empty());
    assert_eq!(
        app.on_key(key(KeyCode::Char('y'))),
        vec![Effect::Sample { id }]
    );
    app.on_app_event(AppEvent::Sampled {
        id,
        result: Ok(Sampled {
            text: "The demo notes say hello.".into(),
            model: "demo-model".into(),
            finish_reason: Some("stop".into()),
        }),
    });
    snapshot("sampling_answer", &app);
    // Typing edits the answer; nothing has gone back yet.
    for c in " Twice.".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    assert!(app
        .overlays
        .samplings
        .front()
        .is_some_and(|s| s.request.is_open()));
    app.on_key(ctrl('s'));
    assert_eq!(
        answered(answer).await,
        SamplingAnswer::Answer {
            text: "The demo notes say hello. Twice.".into(),
            model: "demo-model".into(),
            stop_reason: Some("endTurn".into()),
            edited: true,
        }
    );
    assert!(app.overlays.samplings.is_empty());
    let events = app
        .events
        .rows
        .iter()
        .map(|r| r.text.clone())
        .collect::<Vec<_>>();
    assert!(
        events
            .iter()
            .any(|t| t.contains("asks for a model's message (3 messages, max 100 tokens)")),
        "{events:?}"
    );
}

#[tokio::test]
async fn rejected_or_failed_requests_and_no_model() {
    let mut app = with_model();
    let (_, answer) = request(&mut app, ask());
    app.on_key(key(KeyCode::Char('n')));
    assert!(
        matches!(answered(answer).await, SamplingAnswer::Reject(why) if why.contains("rejected by the operator"))
    );

    // A model failure comes back to the request, which can be rejected from there.
    let (id, answer) = request(&mut app, ask());
    app.on_key(key(KeyCode::Enter));
    app.on_app_event(AppEvent::Sampled {
        id,
        result: Err("connect_refused: nothing listens".into()),
    });
    let problem = match &app.overlays.samplings.front().map(|s| &s.stage) {
        Some(crate::tui::modals::sampling::SamplingStage::Review { problem }) => problem.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(problem.as_deref(), Some("connect_refused: nothing listens"));
    app.on_key(key(KeyCode::Esc));
    assert!(matches!(answered(answer).await, SamplingAnswer::Reject(_)));

    // Esc while the model answers stops it; its late answer is dropped.
    let (id, answer) = request(&mut app, ask());
    app.on_key(key(KeyCode::Char('y')));
    app.on_key(key(KeyCode::Esc));
    app.on_app_event(AppEvent::Sampled {
        id,
        result: Ok(Sampled {
            text: "late".into(),
            model: "m".into(),
            finish_reason: None,
        }),
    });
    assert!(matches!(
        app.overlays.samplings.front().map(|s| &s.stage),
        Some(crate::tui::modals::sampling::SamplingStage::Review { problem: Some(_) })
    ));
    // A request the server withdrew leaves the queue.
    drop(answer);
    app.on_runtime_event(RuntimeEvent::EventsDropped { count: 0 });
    assert!(app.overlays.samplings.is_empty());

    // Without a model running, approving says why and asks nothing.
    let (mut app, _) = populated();
    let (_, _answer) = request(&mut app, ask());
    assert!(app.on_key(key(KeyCode::Char('y'))).is_empty());
    assert!(matches!(
        app.overlays.samplings.front().map(|s| &s.stage),
        Some(crate::tui::modals::sampling::SamplingStage::Review { problem: Some(p) }) if p.contains("no model is configured")
    ));
}
