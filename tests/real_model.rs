//! The agent against a real model: llama-cpp-python's OpenAI-compatible server with
//! SmolLM2-135M-Instruct (both installed under the target dir by `tests/peers`), started on a
//! free port. A whole loop: the prompt, a tool call approved by `--yes`, its result, and a
//! final message. A missing peer fails the test (CI installs the compiler it needs).

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

/// `run` against the model at `url`: a note saved through one demo server whose annotations are
/// ignored (every tool is mutating, so any call waits for approval, given by --yes), its result,
/// and a final message, each checked in order.
fn save_a_note_through(url: &str) {
    let m = marker("real-model");
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}agent:\n  base_url: {url}\n  model: SmolLM2-135M-Instruct\n  stream: false\n  temperature: 0\n  max_tokens: 100\n  max_turns: 2\n  request_timeout: 120s\n  system_prompt: You are a helpful assistant. Use the tools when asked to save a note.\n",
        demo_server("notes", &[], "", &m)
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
}

#[test]
fn a_real_model_calls_a_tool_that_is_approved_and_answers() {
    let (mut server, url) = model_server();
    server.guard(|| save_a_note_through(&url));
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
