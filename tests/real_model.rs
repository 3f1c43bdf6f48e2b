//! The agent against a real model: llama-cpp-python's OpenAI-compatible server with
//! SmolLM2-135M-Instruct (both installed under the target dir by `tests/peers`), started on a
//! free port. A whole loop: the prompt, a tool call approved by `--yes`, its result, and a
//! final message. A missing peer fails the test (CI installs the compiler it needs).

mod common;
#[allow(dead_code)] // this test uses the llama peer only
mod peers;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{bin, demo_server, marker, wait_gone, write_config};
use serde_json::Value;

#[test]
fn a_real_model_calls_a_tool_that_is_approved_and_answers() {
    let (python, model) = peers::llama();
    let (_server, url) = common::llama_server(
        python,
        model,
        &[
            "--chat_format",
            "chatml-function-calling",
            "--n_ctx",
            "4096",
        ],
    );
    let m = marker("real-model");
    // One demo server, its annotations ignored: every tool is mutating, so any call the model
    // makes waits for approval (given by --yes).
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
    assert!(wait_gone(&m, Duration::from_secs(10)).is_empty());
}
