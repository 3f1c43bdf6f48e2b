//! A long session against a real model with a small window: llama-cpp-python's server with
//! SmolLM2-135M-Instruct started with a 2,048-token context, forty prompts in one conversation
//! (`run --prompts`), each call's result padded to about 6 KB by the demo server. Each result
//! reaches the model cut to `max_result_tokens`, the history is compacted as it nears the
//! window, and the session ends without the context overflowing; the transcript keeps every
//! turn and the compactions, and `--resume` goes on from the compacted state.

mod common;
mod peers;

use common::{
    demo_server, marker, of_type, run_in_state, session_records, stdout_lines, wait_gone,
    write_config,
};
use serde_json::Value;

const PROMPTS: usize = 40;

#[test]
fn forty_prompts_with_6_kb_results_fit_a_2048_token_window_by_compaction() {
    let (python, model) = peers::llama();
    let (mut server, url) = common::llama_server(
        python,
        model,
        &[
            "--chat_format",
            "chatml-function-calling",
            "--n_ctx",
            "2048",
            // Its prompt cache keeps each request's KV state so that one after a compaction
            // need not be read again from the start. The cache's limit counts each state's KV
            // bytes (6.5 MB here), but every state also holds a copy of the logits (hundreds
            // of MB): at the default 2 GiB no state is ever let go, and forty prompts grew the
            // server to 21 GB, killed by the kernel for lack of memory. A prompt saves four
            // states (its tool call takes three completions, its answer one): at 32 MB the
            // answer's state of the prompt before was gone, and every answer, asked without
            // the tool definitions, read the whole conversation again. 64 MB keeps it: the
            // session's prompt tokens read 29,443 -> 20,045, its time 332 s -> 253 s, the
            // server at most 1.9 GB.
            "--cache",
            "true",
            "--cache_size",
            "67108864",
            // Both cores for making tokens too (the server's default is half of them): this
            // test runs alone, and a summary's or an answer's tokens come 40 % sooner
            // (SmolLM2 on two cores: 21 against 35 ms a token).
            "--n_threads",
            "2",
        ],
    );
    server.guard(|| long_session(&url));
}

fn long_session(url: &str) {
    let m = marker("real-context");
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}agent:\n  base_url: {url}\n  model: SmolLM2-135M-Instruct\n  stream: false\n  temperature: 0\n  max_tokens: 40\n  max_turns: 2\n  request_timeout: 120s\n  context_window: 2048\n  max_result_tokens: 200\n  system_prompt: You are a helpful assistant. Use the tool to save notes.\n",
        demo_server(
            "notes",
            // One tool, which takes any arguments (the model's go through): every call it
            // makes has its padded result.
            &["--result-pad", "6000", "--only-tools", "none", "--extra-tools", "1"],
            "",
            &m
        )
    ));
    let state = tempfile::tempdir().unwrap();
    let prompts: String = (1..=PROMPTS)
        .map(|n| format!("Save a note called n{n} saying hello {n}.\n"))
        .collect();
    let out = run_in_state(
        state.path(),
        &config.path,
        &["run", "--prompts", "-", "--yes", "--json"],
        &[],
        Some(&prompts),
    );
    let events = stdout_lines(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let outcomes = of_type(&events, "outcome");
    // Every prompt ended with an answer: none failed on an overflowing context.
    assert_eq!(outcomes.len(), PROMPTS, "{stderr}\n{outcomes:#?}");
    assert!(
        outcomes.iter().all(|o| o["status"] == "answered"),
        "{stderr}\n{outcomes:#?}"
    );
    let compactions: Vec<&Value> = of_type(&events, "compacted")
        .into_iter()
        .filter(|c| c["error"].is_null())
        .collect();
    assert!(!compactions.is_empty(), "no compaction: {stderr}");
    // Results came back padded (a small model does not call a tool for every prompt, nor
    // always with a JSON object: most of them), and the model was sent them cut.
    let results = of_type(&events, "tool_result");
    let ran: Vec<&&Value> = results.iter().filter(|r| r["status"] == "ok").collect();
    assert!(ran.len() >= PROMPTS * 3 / 4, "{} results ran", ran.len());
    assert!(ran
        .iter()
        .all(|r| r["content"].as_str().is_some_and(|c| c.len() > 6000)));
    // The transcript keeps every prompt and every result whole, and marks the compactions.
    let id = of_type(&events, "session")[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let kept = session_records(state.path(), &id);
    let count = |kind: &str| kept.iter().filter(|r| r["type"] == kind).count();
    assert_eq!(count("prompt"), PROMPTS);
    assert_eq!(count("tool_result"), results.len());
    assert_eq!(count("compacted"), compactions.len());
    assert!(kept
        .iter()
        .filter(|r| r["type"] == "tool_result" && r["status"] == "ok")
        .all(|r| r["content"].as_str().is_some_and(|c| c.len() > 6000)
            && r["sent"].as_str().is_some_and(|s| s.len() < 1200)));
    // The meter said where the context stood, within the window.
    let meters = of_type(&events, "context");
    assert!(meters.iter().all(|c| c["window"] == 2048), "{meters:#?}");
    // --resume goes on from the compacted state.
    let out = run_in_state(
        state.path(),
        &config.path,
        &[
            "run",
            "Save a note called last saying bye.",
            "--resume",
            &id,
            "--yes",
            "--json",
        ],
        &[],
        None,
    );
    let events = stdout_lines(&out);
    assert_eq!(
        of_type(&events, "outcome")[0]["status"],
        "answered",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(wait_gone(&m, std::time::Duration::from_secs(10)).is_empty());
}
