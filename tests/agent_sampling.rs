//! Servers' sampling requests answered by the agent's model, over real processes and sockets:
//! server-everything's `trigger-sampling-request` (stdio) asks, the request goes up the
//! runtime's event stream, and `agent::sampling::sample` (what the console's modal runs once
//! the operator approves) answers it with the demo model, then with a real model
//! (llama-cpp-python + SmolLM2, installed under the target dir by `tests/peers`). Without an
//! `agent:` the sampling capability is not declared, so the server offers no such tool; with
//! one, a headless command (`call`) rejects the request: nobody is there to approve it.

mod common;
mod peers;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aimon_console::agent::sampling::sample;
use aimon_console::agent::HttpModelClient;
use aimon_console::config::{
    AgentConfig, AnnotationTrust, ApprovalPolicy, ModelProfile, PolicyConfig, ServerConfig,
};
use aimon_console::runtime::{
    AgentRuntime, AgentRuntimeFactory, CallStatus, McpEvent, RequestOutcome, RuntimeEvent,
    RuntimeOptions,
};
use common::{config_of, demo_model, marker, wait_gone};
use serde_json::json;
use tokio_util::sync::CancellationToken;

type Seen = Arc<Mutex<Vec<RuntimeEvent>>>;

/// server-everything (approval `never`) with `profile` as the agent's model (none: no agent);
/// every sampling request is answered through `agent::sampling::sample` with that model.
async fn everything(m: &str, profile: Option<ModelProfile>) -> (AgentRuntime, Seen) {
    let script = peers::npm().join("@modelcontextprotocol/server-everything/dist/index.js");
    let mut server = ServerConfig::stdio(
        "everything",
        "node",
        vec![script.display().to_string(), "stdio".into()],
    );
    server.env.insert("AIMON_TEST_MARKER".into(), m.to_string());
    server.annotation_trust = AnnotationTrust::Trust;
    let mut cfg = config_of(
        vec![server],
        PolicyConfig {
            approval: ApprovalPolicy::Never,
            ..PolicyConfig::default()
        },
    );
    let client = profile.as_ref().map(|p| {
        let url = match &p.endpoint {
            aimon_console::config::ModelEndpoint::Url(url) => url.clone(),
            other => panic!("{other:?}"),
        };
        Arc::new(HttpModelClient::new(p, &url).expect("client"))
    });
    cfg.agent = profile.map(|p| AgentConfig {
        default: p.name.clone(),
        profiles: [(p.name.clone(), p)].into_iter().collect(),
    });
    let (events, mut stream) = AgentRuntimeFactory::events();
    let seen: Seen = Arc::default();
    let into = seen.clone();
    tokio::spawn(async move {
        while let Some(event) = stream.recv().await {
            if let RuntimeEvent::Mcp(McpEvent::SamplingRequested(request)) = &event {
                let (request, client) = (request.clone(), client.clone());
                tokio::spawn(async move {
                    let Some(client) = client else {
                        return request.reject("no model");
                    };
                    match sample(&*client, &request.ask).await {
                        Ok(s) => request.answer(
                            s.text,
                            s.model,
                            s.finish_reason.map(|r| r.as_str().to_string()),
                            false,
                        ),
                        Err(e) => request.reject(format!("{}: {}", e.class.as_str(), e.message)),
                    }
                });
            }
            into.lock().unwrap().push(event);
        }
    });
    let runtime = AgentRuntimeFactory::create(&cfg, RuntimeOptions::default(), events)
        .await
        .expect("runtime");
    runtime.wait_started().await;
    (runtime, seen)
}

/// Calls `trigger-sampling-request` with `prompt`; returns the server's result text, after
/// checking the request reached us with the server's prompt and was answered.
async fn trigger(runtime: &AgentRuntime, seen: &Seen, prompt: &str) -> String {
    let out = runtime
        .call(
            "mcp__everything__trigger-sampling-request",
            json!({"prompt": prompt, "maxTokens": 60}),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(out.status, CallStatus::Ok, "{out:?}");
    let seen = seen.lock().unwrap();
    let asked = seen
        .iter()
        .find_map(|e| match e {
            RuntimeEvent::Mcp(McpEvent::SamplingRequested(r)) => Some(r.clone()),
            _ => None,
        })
        .expect("a sampling request");
    assert_eq!(asked.server, "everything");
    assert_eq!(asked.ask.max_tokens, 60);
    assert_eq!(
        asked.ask.system_prompt.as_deref(),
        Some("You are a helpful test server.")
    );
    assert!(asked.ask.messages[0].text.contains(prompt), "{asked:?}");
    assert!(
        seen.iter().any(|e| matches!(e,
            RuntimeEvent::Mcp(McpEvent::ServerRequest { method, outcome: RequestOutcome::Answered, .. })
                if method == "sampling/createMessage")),
        "no answered sampling/createMessage"
    );
    out.result.text
}

#[tokio::test]
async fn the_demo_model_answers_server_everythings_sampling_request() {
    let m = marker("sampling-demo");
    let (_model, url) = demo_model(&[]);
    let mut profile = ModelProfile::url("demo", &url, "demo");
    profile.request_timeout = Duration::from_secs(10);
    let (runtime, seen) = everything(&m, Some(profile)).await;
    let text = trigger(&runtime, &seen, "what is 2 plus 3").await;
    // The server echoes the result it got: the demo model's words, and its name.
    assert!(text.contains("LLM sampling result"), "{text}");
    assert!(text.contains("(demo model)"), "{text}");
    assert!(text.contains("\"model\": \"demo\""), "{text}");
    assert!(text.contains("\"role\": \"assistant\""), "{text}");
    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}

#[tokio::test]
async fn without_a_model_sampling_is_not_declared() {
    let m = marker("sampling-none");
    let (runtime, _seen) = everything(&m, None).await;
    let names: Vec<String> = runtime.tools().into_iter().map(|t| t.name).collect();
    assert!(
        names.iter().any(|n| n == "mcp__everything__echo"),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.contains("trigger-sampling-request")),
        "sampling declared without a model: {names:?}"
    );
    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_real_model_answers_server_everythings_sampling_request() {
    let (_server, url) = tokio::task::spawn_blocking(|| {
        let (python, model) = peers::llama();
        common::llama_server(python, model, &["--n_ctx", "2048"])
    })
    .await
    .expect("llama server");
    let m = marker("sampling-real");
    let mut profile = ModelProfile::url("local", &url, "SmolLM2-135M-Instruct");
    profile.stream = false;
    profile.temperature = Some(0.0);
    profile.request_timeout = Duration::from_secs(120);
    let (runtime, seen) = everything(&m, Some(profile)).await;
    let text = trigger(&runtime, &seen, "Say hello in one short sentence.").await;
    assert!(text.contains("LLM sampling result"), "{text}");
    assert!(
        text.contains("\"model\": \"SmolLM2-135M-Instruct\""),
        "{text}"
    );
    // The model wrote something (what a 135M model says is not ours to predict).
    let result: serde_json::Value =
        serde_json::from_str(text.split_once('\n').map(|(_, json)| json).unwrap_or("{}"))
            .unwrap_or_else(|e| panic!("{e}: {text}"));
    let said = result["content"]["text"].as_str().unwrap_or("");
    assert!(!said.trim().is_empty(), "{text}");
    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}

#[test]
fn a_headless_call_rejects_a_sampling_request() {
    let m = marker("sampling-headless");
    let script = peers::npm().join("@modelcontextprotocol/server-everything/dist/index.js");
    // The model is never asked: nothing listens there.
    let config = common::write_config(&format!(
        "mcp:\n  servers:\n    - name: everything\n      command: node\n      args: [{:?}, stdio]\n      env: {{AIMON_TEST_MARKER: {m}}}\nagent:\n  base_url: http://127.0.0.1:9/v1\n  model: nobody\n",
        script.display().to_string()
    ));
    let out = common::run(
        &[
            "call",
            "mcp__everything__trigger-sampling-request",
            "--args",
            r#"{"prompt": "hi"}"#,
            "--yes",
            "--events",
            "--json",
        ],
        Some(&config.path),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let asked = lines
        .iter()
        .find(|l| l["type"] == "sampling_requested")
        .unwrap_or_else(|| panic!("no sampling_requested:\n{stdout}"));
    assert_eq!(asked["request"]["max_tokens"], 100, "{asked}");
    assert_eq!(asked["request"]["messages"][0]["role"], "user", "{asked}");
    let answered = lines
        .iter()
        .find(|l| l["type"] == "server_request" && l["method"] == "sampling/createMessage")
        .unwrap_or_else(|| panic!("no server_request:\n{stdout}"));
    assert_eq!(answered["outcome"], "declined", "{answered}");
    assert!(
        answered["detail"]
            .as_str()
            .unwrap_or("")
            .contains("aimon-console call has no operator to approve a sampling request"),
        "{answered}"
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}
