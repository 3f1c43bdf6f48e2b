//! The agent against a real model, through each provider: llama-cpp-python's server with
//! SmolLM2-135M-Instruct (both installed under the target dir by `tests/peers`), started on a
//! free port, spoken to directly in Chat Completions (`openai-chat`), and through LiteLLM's
//! proxy in front of it in Anthropic's Messages (`anthropic`) and OpenAI's Responses
//! (`openai-responses`). A whole loop each: the prompt, a tool call approved by `--yes`, its
//! result, a final message, and the transcript holding the turns. A missing peer fails the test
//! (CI installs the compiler it needs).

mod common;
mod peers;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{bin, demo_server, marker, wait_gone, write_config, Peer};
use serde_json::Value;

/// The llama server with the chat format that makes SmolLM2's tool calls well formed.
fn model_server() -> (Peer, String) {
    let (python, model) = peers::llama();
    common::llama_server(
        python,
        model,
        &[
            "--chat_format",
            "chatml-function-calling",
            "--n_ctx",
            "4096",
        ],
    )
}

/// How the agent reaches the model: its provider, model name, key and whether it streams.
struct Endpoint<'a> {
    url: &'a str,
    provider: &'a str,
    model: &'a str,
    key: Option<&'a str>,
    stream: bool,
}

impl<'a> Endpoint<'a> {
    /// llama-cpp-python's own server, in Chat Completions (it cannot stream tool calls).
    fn llama(url: &'a str) -> Self {
        Endpoint {
            url,
            provider: "openai-chat",
            model: "SmolLM2-135M-Instruct",
            key: None,
            stream: false,
        }
    }

    /// The LiteLLM proxy in front of it, in `provider`'s API.
    fn litellm(url: &'a str, provider: &'a str, stream: bool) -> Self {
        Endpoint {
            url,
            provider,
            model: peers::LITELLM_MODEL,
            key: Some(peers::LITELLM_KEY),
            stream,
        }
    }
}

/// `run` against `endpoint`: a note saved through one demo server whose annotations are ignored
/// (every tool is mutating, so any call waits for approval, given by --yes), its result, and a
/// final message, each checked in order; then the session's transcript.
fn save_a_note_through(url: &str) {
    save_a_note(&Endpoint::llama(url));
}

fn save_a_note(endpoint: &Endpoint<'_>) {
    let m = marker("real-model");
    let key = endpoint
        .key
        .map(|k| format!("  api_key: {k}\n"))
        .unwrap_or_default();
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}agent:\n  base_url: {}\n  provider: {}\n  model: {}\n{key}  stream: {}\n  temperature: 0\n  max_tokens: 100\n  max_turns: 2\n  request_timeout: 120s\n  system_prompt: You are a helpful assistant. Use the tools when asked to save a note.\n",
        demo_server("notes", &[], "", &m),
        endpoint.url,
        endpoint.provider,
        endpoint.model,
        endpoint.stream,
    ));
    let state = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .arg("--config")
        .arg(&config.path)
        .arg("--log-file")
        .arg(state.path().join("aimon.log"))
        .args(["run", "Save a note called t1 saying hi.", "--yes", "--json"])
        .env("XDG_STATE_HOME", state.path())
        .stdin(Stdio::null())
        .output()
        .expect("run aimon-console");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(wait_gone(&m, Duration::from_secs(10)).is_empty());
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let at = |kind: &str| events.iter().position(|e| e["type"] == kind);
    let call = at("tool_call").unwrap_or_else(|| panic!("no tool call:\n{stdout}"));
    let approved = events
        .iter()
        .position(|e| {
            e["type"] == "approval_answered"
                && e["by"] == "yes_flag"
                && e["decision"] == "allow_once"
        })
        .unwrap_or_else(|| panic!("no approval by --yes:\n{stdout}"));
    let result = at("tool_result").unwrap_or_else(|| panic!("no tool result:\n{stdout}"));
    assert!(call < approved && approved < result, "{stdout}");
    assert_eq!(events[result]["status"], "ok", "{stdout}");
    let answer = events
        .iter()
        .find(|e| e["type"] == "answer")
        .unwrap_or_else(|| panic!("no final message:\n{stdout}"));
    assert!(
        !answer["text"].as_str().unwrap_or("").trim().is_empty(),
        "{stdout}"
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The transcript holds the turns: the prompt, the call's answer, its approval and result,
    // and the final answer, in that order.
    let id = events
        .iter()
        .find(|e| e["type"] == "session")
        .and_then(|e| e["id"].as_str())
        .unwrap_or_else(|| panic!("no session:\n{stdout}"));
    let path = state
        .path()
        .join(format!("aimon-console/sessions/{id}.jsonl"));
    let records: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let kinds: Vec<&str> = records
        .iter()
        .filter_map(|r| r["type"].as_str())
        .filter(|k| ["prompt", "assistant", "approval", "tool_result", "answer"].contains(k))
        .collect();
    let first = |kind: &str| kinds.iter().position(|k| *k == kind);
    assert!(
        first("prompt") < first("assistant")
            && first("assistant") < first("approval")
            && first("approval") < first("tool_result")
            && first("tool_result") < first("answer")
            && first("prompt").is_some(),
        "{}: {kinds:?}",
        endpoint.provider
    );
    let calls = records
        .iter()
        .find(|r| r["type"] == "assistant")
        .map(|r| r["tool_calls"].as_array().map_or(0, Vec::len));
    assert_eq!(calls, Some(1), "{}: {records:#?}", endpoint.provider);
}

#[test]
fn a_real_model_calls_a_tool_that_is_approved_and_answers() {
    let (mut server, url) = model_server();
    server.guard(|| save_a_note_through(&url));
}

/// The same through LiteLLM's proxy in front of the same server, in Anthropic's Messages API and
/// OpenAI's Responses API, whole and streamed (the proxy asks llama for a tool turn unstreamed
/// and streams its answer: tests/peers/litellm/llama_requests.py).
#[test]
fn the_messages_and_responses_apis_through_litellm_call_a_tool_that_is_approved_and_answer() {
    let (mut llama, llama_url) = model_server();
    let (litellm, config) = peers::litellm();
    let (mut proxy, url) = common::litellm_server(litellm, config, &llama_url);
    llama.guard(|| {
        proxy.guard(|| {
            for provider in ["anthropic", "openai-responses"] {
                for stream in [false, true] {
                    save_a_note(&Endpoint::litellm(&url, provider, stream));
                }
            }
        })
    });
}

/// A peer that dies mid-test is named in the failure: the same run, with the model server
/// killed (SIGKILL) once it is up, fails with a message that names llama_cpp.server, the signal
/// and the last lines it wrote (uvicorn's start-up line among them), not only the model error.
#[test]
fn a_model_server_killed_mid_test_is_named_in_the_failure() {
    let (mut server, url) = model_server();
    // SAFETY: kill(2) on a pid this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(server.pid() as i32, libc::SIGKILL) }, 0);
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        server.guard(|| save_a_note_through(&url))
    }))
    .expect_err("the run passed with its model server killed");
    let message = common::peer::message(&*failed);
    eprintln!("the failure as a test would report it:\n{message}");
    for expected in [
        "the peer llama_cpp.server",
        &format!("(pid {})", server.pid()),
        "died during the test: killed by signal 9 (SIGKILL)",
        "the last lines of its output:",
        "Uvicorn running on http://127.0.0.1:",
    ] {
        assert!(
            message.contains(expected),
            "{expected:?} not in:\n{message}"
        );
    }
    // The model error the run printed comes first: the peer's death is added to it, not put
    // in its place.
    let model_error = message.find("no tool call").expect("the run's own failure");
    assert!(
        model_error < message.find("the peer").unwrap_or(0),
        "{message}"
    );
}
