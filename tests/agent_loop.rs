//! The agent's loop against real processes: the demo model (scripted) over HTTP and the demo
//! MCP server over stdio, through `AgentRuntime`. The tool list changes only at turn
//! boundaries; made-up tools, arguments that are not JSON and schema failures go back to the
//! model as errors; a cancel ends the turn at once and cancels the running call.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use aimon_console::agent::start::start_runtime;
use aimon_console::agent::turn::Item;
use aimon_console::agent::{
    AgentEvent, Conversation, ConversationSettings, HttpModelClient, PromptOutcome, ToolCallStatus,
};
use aimon_console::config::{
    AnnotationTrust, ApprovalPolicy, ModelProfile, PolicyConfig, RestartPolicy,
};
use aimon_console::runtime::{AgentRuntimeFactory, CallOrigin, CallStatus, RuntimeEvent};
use common::{config_of, demo_config, demo_model, marker, wait_gone};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

struct Setup {
    conversation: Conversation,
    agent: mpsc::UnboundedReceiver<AgentEvent>,
    runtime_events: Arc<std::sync::Mutex<Vec<RuntimeEvent>>>,
    runtime: Arc<aimon_console::runtime::AgentRuntime>,
    _model: common::Background,
    marker: String,
}

/// A conversation over a `--live-tools` demo server named `live` (trusted, approvals off) and
/// the demo model started with `model_flags`.
async fn setup(name: &str, model_flags: &[&str]) -> Setup {
    setup_with(name, model_flags, RestartPolicy::OnFailure).await
}

async fn setup_with(name: &str, model_flags: &[&str], restart: RestartPolicy) -> Setup {
    let m = marker(name);
    let mut server = demo_config("live", &["--live-tools"], AnnotationTrust::Trust, &m);
    server.restart = restart;
    let config = config_of(
        vec![server],
        PolicyConfig {
            approval: ApprovalPolicy::Never,
            ..PolicyConfig::default()
        },
    );
    let (events, mut stream) = AgentRuntimeFactory::events();
    let runtime_events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = runtime_events.clone();
    tokio::spawn(async move {
        while let Some(event) = stream.recv().await {
            sink.lock().unwrap().push(event);
        }
    });
    let runtime = start_runtime(&config, events).await.expect("runtime");
    let started = runtime.wait_started().await;
    assert!(
        started.servers.iter().all(|s| s.failure.is_none()),
        "{started:?}"
    );
    let (model, url) = demo_model(model_flags);
    let mut profile = ModelProfile::url("test", &url, "demo");
    profile.request_timeout = Duration::from_secs(10);
    let client = Arc::new(HttpModelClient::new(&profile, &url).expect("client"));
    let (tx, agent) = mpsc::unbounded_channel();
    let conversation = Conversation::new(
        runtime.clone(),
        client,
        ConversationSettings::new("test", 6),
        Vec::new(),
        tx,
        None,
    );
    Setup {
        conversation,
        agent,
        runtime_events,
        runtime,
        _model: model,
        marker: m,
    }
}

fn script(turns: serde_json::Value) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), turns.to_string()).expect("write script");
    file
}

fn drain(rx: &mut mpsc::UnboundedReceiver<AgentEvent>) -> Vec<AgentEvent> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        out.push(e);
    }
    out
}

fn offered(events: &[AgentEvent], turn: u32) -> Vec<String> {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::TurnStarted { turn: t, tools } if *t == turn => Some(tools.to_vec()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no turn {turn} in {events:?}"))
}

fn results(events: &[AgentEvent]) -> Vec<(u32, String, ToolCallStatus, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolResult {
                turn,
                tool,
                status,
                content,
                ..
            } => Some((*turn, tool.clone(), *status, content.clone())),
            _ => None,
        })
        .collect()
}

async fn close(s: Setup) {
    s.runtime.close().await;
    assert!(wait_gone(&s.marker, Duration::from_secs(10)).is_empty());
}

#[tokio::test]
async fn a_list_change_during_a_turn_shows_in_the_next_turns_tools_not_this_ones() {
    let turns = script(json!([
        {"text": "Adding a tool, and calling it at once.", "tool_calls": [
            {"name": "change_tools", "arguments": {"action": "add", "tool": "fresh"}},
            {"name": "mcp__live__fresh", "arguments": {}}
        ]},
        {"text": "Now it is there.", "tool_calls": [{"name": "mcp__live__fresh", "arguments": {"text": "x"}}]},
        {"text": "done"}
    ]));
    let path = turns.path().to_string_lossy().into_owned();
    let mut s = setup("list-change", &["--script", &path]).await;
    let report = s.conversation.prompt("go", CancellationToken::new()).await;
    assert_eq!(
        report.outcome,
        PromptOutcome::Answered {
            text: "done".into()
        }
    );
    let events = drain(&mut s.agent);
    assert!(!offered(&events, 1).contains(&"mcp__live__fresh".to_string()));
    assert!(offered(&events, 2).contains(&"mcp__live__fresh".to_string()));
    let got = results(&events);
    assert_eq!(got[0].2, ToolCallStatus::Ok, "{got:?}");
    assert_eq!(
        (got[1].0, got[1].2),
        (1, ToolCallStatus::UnknownTool),
        "{got:?}"
    );
    assert!(
        got[1]
            .3
            .contains("no tool named \"mcp__live__fresh\" in this turn's tool list"),
        "{got:?}"
    );
    assert_eq!(
        (got[2].0, got[2].2, got[2].3.as_str()),
        (2, ToolCallStatus::Ok, "fresh"),
        "{got:?}"
    );
    // The runtime saw the agent as the caller, with its stated reason.
    let origins: Vec<CallOrigin> = s
        .runtime_events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            RuntimeEvent::CallStarted { origin, .. } => Some(origin.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        origins[0],
        CallOrigin::Agent {
            reason: "Adding a tool, and calling it at once.".into()
        }
    );
    close(s).await;
}

#[tokio::test]
async fn a_server_that_went_down_has_its_tools_left_out_of_the_next_turn() {
    let turns = script(json!([
        {"text": "Crashing it.", "tool_calls": [
            {"name": "mcp__live__crash", "arguments": {"code": 3, "after_ms": 10}}
        ]},
        {"text": "Trying it anyway.", "tool_calls": [
            {"name": "mcp__live__echo", "arguments": {"text": "x"}}
        ]},
        {"text": "done"}
    ]));
    let path = turns.path().to_string_lossy().into_owned();
    let mut s = setup_with("down-tools", &["--script", &path], RestartPolicy::Never).await;
    let report = s.conversation.prompt("go", CancellationToken::new()).await;
    assert_eq!(
        report.outcome,
        PromptOutcome::Answered {
            text: "done".into()
        }
    );
    let events = drain(&mut s.agent);
    assert!(offered(&events, 1).contains(&"mcp__live__echo".to_string()));
    let second = offered(&events, 2);
    assert!(
        second.iter().all(|t| !t.starts_with("mcp__live__")),
        "the down server's tools were offered: {second:?}"
    );
    let got = results(&events);
    assert_eq!((got[0].0, got[0].2), (1, ToolCallStatus::Error), "{got:?}");
    // Called anyway (it was in an earlier turn's list): the model is told why it is not there.
    assert_eq!(
        (got[1].0, got[1].2),
        (2, ToolCallStatus::UnknownTool),
        "{got:?}"
    );
    assert!(
        got[1].3.contains("not in this turn's tool list")
            && got[1].3.contains("server live is disconnected"),
        "{got:?}"
    );
    close(s).await;
}

#[tokio::test]
async fn made_up_tools_bad_json_and_schema_failures_go_back_to_the_model() {
    let turns = script(json!([
        {"text": "", "tool_calls": [
            {"name": "mcp__nowhere__launch", "arguments": {}},
            {"name": "add", "arguments": "{\"a\": 1,"},
            {"name": "add", "arguments": {"a": "one"}},
            {"name": "add", "arguments": "[1, 2]"},
            {"name": "add", "arguments": {"a": 1, "b": 2}}
        ]},
        {"text": "I see."}
    ]));
    let path = turns.path().to_string_lossy().into_owned();
    let mut s = setup("bad-calls", &["--script", &path]).await;
    let report = s.conversation.prompt("go", CancellationToken::new()).await;
    assert_eq!(
        report.outcome,
        PromptOutcome::Answered {
            text: "I see.".into()
        }
    );
    assert_eq!(report.tool_failures, 4);
    let got = results(&drain(&mut s.agent));
    let statuses: Vec<ToolCallStatus> = got.iter().map(|r| r.2).collect();
    assert_eq!(
        statuses,
        vec![
            ToolCallStatus::UnknownTool,
            ToolCallStatus::BadArguments,
            ToolCallStatus::Error,
            ToolCallStatus::BadArguments,
            ToolCallStatus::Ok
        ]
    );
    assert!(got[1].3.contains("not valid JSON"), "{got:?}");
    assert!(
        got[2].3.contains("do not match the input schema"),
        "{got:?}"
    );
    assert!(
        got[3].3.contains("must be a JSON object, not an array"),
        "{got:?}"
    );
    assert_eq!(got[4].3, "3");
    // Every call got its tool message, in order, so the conversation stays well formed.
    let tool_messages = s
        .conversation
        .items()
        .iter()
        .filter(|m| matches!(m, Item::ToolResult { .. }))
        .count();
    assert_eq!(tool_messages, 5);
    close(s).await;
}

#[tokio::test]
async fn a_cancel_ends_the_turn_cancels_the_running_call_and_the_next_prompt_works() {
    let turns = script(json!([
        {"text": "This takes a while.", "tool_calls": [{"name": "slow", "arguments": {"steps": 200, "step_ms": 100}}]}
    ]));
    let path = turns.path().to_string_lossy().into_owned();
    let mut s = setup("cancel", &["--script", &path]).await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let events = s.runtime_events.clone();
    let cancelled_at = tokio::spawn(async move {
        // Once the call runs, cancel the turn.
        loop {
            let running = events.lock().unwrap().iter().any(|e| {
                matches!(
                    e,
                    RuntimeEvent::CallStatus {
                        status: CallStatus::Running,
                        ..
                    }
                )
            });
            if running {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        trigger.cancel();
        Instant::now()
    });
    let started = Instant::now();
    let report = s.conversation.prompt("go", cancel).await;
    let ended = Instant::now();
    assert_eq!(report.outcome, PromptOutcome::Cancelled);
    if let Ok(at) = cancelled_at.await {
        // Shown with --nocapture; no speed is asserted.
        eprintln!(
            "the prompt ended {:?} after the cancel",
            ended.duration_since(at)
        );
    }
    // 200 steps of 100 ms would be 20 s; the cancel ends it long before (no speed asserted).
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    // The collector task reads the runtime's events on its own time: wait for the end.
    let deadline = Instant::now() + Duration::from_secs(5);
    let finished = loop {
        let finished: Vec<CallStatus> = s
            .runtime_events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                RuntimeEvent::CallFinished { status, .. } => Some(*status),
                _ => None,
            })
            .collect();
        if !finished.is_empty() || Instant::now() > deadline {
            break finished;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(finished, vec![CallStatus::Cancelled]);
    let got = results(&drain(&mut s.agent));
    assert_eq!(got[0].2, ToolCallStatus::Cancelled, "{got:?}");
    // The next prompt works (past the script, the demo model's rules answer).
    let report = s
        .conversation
        .prompt("what is 2 plus 3", CancellationToken::new())
        .await;
    assert_eq!(
        report.outcome,
        PromptOutcome::Answered {
            text: "(demo model) 2 plus 3 is 5.".into()
        }
    );
    close(s).await;
}

#[tokio::test]
async fn a_cancel_while_the_model_streams_drops_the_request() {
    let mut s = setup("cancel-stream", &["--chunk-delay-ms", "300"]).await;
    let cancel = CancellationToken::new();
    let mut agent = std::mem::replace(&mut s.agent, mpsc::unbounded_channel().1);
    let report = {
        let prompt = s.conversation.prompt("hello", cancel.clone());
        tokio::pin!(prompt);
        // Wait for the first streamed text, then cancel.
        let first = tokio::select! {
            _ = &mut prompt => panic!("the prompt ended before streaming"),
            e = async { loop { if let Some(AgentEvent::TextDelta { text, .. }) = agent.recv().await { return text; } } } => e,
        };
        assert!(!first.is_empty());
        cancel.cancel();
        let cancelled = Instant::now();
        let report = tokio::time::timeout(Duration::from_secs(5), prompt)
            .await
            .expect("the cancel ends the prompt");
        // Shown with --nocapture; no speed is asserted.
        eprintln!(
            "the prompt ended {:?} after the cancel",
            cancelled.elapsed()
        );
        report
    };
    assert_eq!(report.outcome, PromptOutcome::Cancelled);
    // The prompt got no answer: the history is as it was (empty).
    assert!(
        s.conversation.items().is_empty(),
        "{:?}",
        s.conversation.items()
    );
    close(s).await;
}

#[tokio::test]
async fn a_prompt_the_model_failed_leaves_no_user_message_behind() {
    // The first request gets a 401 (not retried), the next ones an answer.
    let mut s = setup("failed-prompt", &["--status", "401", "--times", "1"]).await;
    let first = s
        .conversation
        .prompt("what is 1 plus 1", CancellationToken::new())
        .await;
    assert!(
        matches!(first.outcome, PromptOutcome::ModelFailed(_)),
        "{first:?}"
    );
    let second = s
        .conversation
        .prompt("hello", CancellationToken::new())
        .await;
    assert!(
        matches!(second.outcome, PromptOutcome::Answered { .. }),
        "{second:?}"
    );
    // The second prompt, its answer: never two user messages in a row.
    let roles: Vec<&str> = s
        .conversation
        .items()
        .iter()
        .map(|m| match m {
            Item::User { .. } => "user",
            Item::Assistant { .. } => "assistant",
            Item::ToolResult { .. } => "tool",
        })
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert!(matches!(&s.conversation.items()[0], Item::User { text } if text == "hello"));
    close(s).await;
}
