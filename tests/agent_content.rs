//! What a model is told of results that are not text: server-everything (a real third-party
//! server) returns an embedded text resource, an embedded blob and an image; the agent sends
//! the model a placeholder naming each one's type and size, never its contents, while the
//! operator's view of the same call (its result text) still shows the embedded text.

mod common;
mod peers;

use std::sync::Arc;
use std::time::Duration;

use aimon_console::agent::start::start_runtime;
use aimon_console::agent::{
    AgentEvent, Conversation, ConversationSettings, HttpModelClient, ToolCallStatus,
};
use aimon_console::config::{ApprovalPolicy, ModelProfile, PolicyConfig, ServerConfig};
use aimon_console::runtime::{AgentRuntimeFactory, RuntimeEvent};
use common::{config_of, demo_model, marker, wait_gone};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn images_and_embedded_resources_reach_the_model_as_placeholders() {
    let m = marker("agent-content");
    let script = peers::npm().join("@modelcontextprotocol/server-everything/dist/index.js");
    let mut server = ServerConfig::stdio(
        "everything",
        "node",
        vec![script.display().to_string(), "stdio".into()],
    );
    server.env.insert("AIMON_TEST_MARKER".into(), m.clone());
    let config = config_of(
        vec![server],
        PolicyConfig {
            approval: ApprovalPolicy::Never,
            ..PolicyConfig::default()
        },
    );
    let (events, mut stream) = AgentRuntimeFactory::events();
    let finished = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = finished.clone();
    tokio::spawn(async move {
        while let Some(event) = stream.recv().await {
            if let RuntimeEvent::CallFinished { result, .. } = event {
                sink.lock().unwrap().push(result.text);
            }
        }
    });
    let runtime = start_runtime(&config, events).await.expect("runtime");
    let started = runtime.wait_started().await;
    assert!(
        started.servers.iter().all(|s| s.failure.is_none()),
        "{started:?}"
    );

    let turns = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(
        turns.path(),
        json!([
            {"text": "Fetching them.", "tool_calls": [
                {"name": "get-resource-reference", "arguments": {"resourceType": "Text", "resourceId": 1}},
                {"name": "get-resource-reference", "arguments": {"resourceType": "Blob", "resourceId": 2}},
                {"name": "get-tiny-image", "arguments": {}}
            ]},
            {"text": "done"}
        ])
        .to_string(),
    )
    .expect("script");
    let path = turns.path().to_string_lossy().into_owned();
    let (_model, url) = demo_model(&["--script", &path]);
    let mut profile = ModelProfile::url("test", &url, "demo");
    profile.request_timeout = Duration::from_secs(10);
    let client = Arc::new(HttpModelClient::new(&profile, &url).expect("client"));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut conversation = Conversation::new(
        runtime.clone(),
        client,
        ConversationSettings::new("test", 4),
        Vec::new(),
        tx,
        None,
    );
    let report = conversation.prompt("go", CancellationToken::new()).await;
    assert_eq!(report.tool_failures, 0, "{report:?}");
    let mut sent = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let AgentEvent::ToolResult {
            status, content, ..
        } = event
        {
            assert_eq!(status, ToolCallStatus::Ok, "{content}");
            sent.push(content);
        }
    }
    assert_eq!(sent.len(), 3, "{sent:?}");
    // The text resource: its URI, type and size; not its text.
    println!("what the model was sent:\n{}", sent.join("\n---\n"));
    assert!(sent[0].contains("[embedded resource: "), "{}", sent[0]);
    assert!(sent[0].contains("text/plain"), "{}", sent[0]);
    assert!(sent[0].contains("bytes of text]"), "{}", sent[0]);
    assert!(
        !sent[0].contains("This is a plaintext resource"),
        "the resource's text went to the model: {}",
        sent[0]
    );
    // The text blocks around it are kept.
    assert!(
        sent[0].starts_with("Returning resource reference for Resource 1:"),
        "{}",
        sent[0]
    );
    assert!(sent[1].contains("bytes of binary]"), "{}", sent[1]);
    assert!(!sent[1].contains("base64 blob"), "{}", sent[1]);
    assert!(sent[2].contains("[image: image/png, "), "{}", sent[2]);
    assert!(sent[2].contains(" bytes]"), "{}", sent[2]);

    // The operator's side of the same calls is unchanged: the embedded text shows.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let shown = finished.lock().unwrap().clone();
    assert!(
        shown
            .iter()
            .any(|t| t.contains("This is a plaintext resource")),
        "{shown:?}"
    );

    drop(conversation);
    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(10)).is_empty());
}
