//! `aimon-console run --prompts FILE` (and `-`, standard input): several prompts in one
//! process, one start and one conversation, against the demo model: an outcome line per
//! prompt, one session whose transcript holds every prompt, and a stop after a prompt that
//! ended without an answer. A transcript of an earlier format still resumes.

mod common;

use std::path::Path;
use std::process::Output;

use common::{demo_model, of_type, run_in_state, stdout_lines, write_config};
use serde_json::Value;

fn run(state: &Path, config: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    run_in_state(state, config, args, &[], stdin)
}

#[test]
fn several_prompts_run_in_one_conversation_from_a_file_or_stdin() {
    let state = tempfile::tempdir().unwrap();
    let (_model, url) = demo_model(&[]);
    let config = write_config(&format!("agent:\n  base_url: {url}\n  model: demo\n"));
    let file = state.path().join("prompts.txt");
    std::fs::write(&file, "what is 2 plus 3\n\nhello\nwhat is 4 plus 5\n").unwrap();
    let from_file = run(
        state.path(),
        &config.path,
        &["run", "--prompts", &file.to_string_lossy(), "--json"],
        None,
    );
    let from_stdin = run(
        state.path(),
        &config.path,
        &["run", "--prompts", "-", "--json"],
        Some("what is 2 plus 3\n\nhello\nwhat is 4 plus 5\n"),
    );
    for out in [from_file, from_stdin] {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let events = stdout_lines(&out);
        let sessions = of_type(&events, "session");
        assert_eq!(sessions.len(), 1, "{events:#?}");
        let outcomes = of_type(&events, "outcome");
        let numbers: Vec<&Value> = outcomes.iter().map(|o| &o["prompt"]).collect();
        assert_eq!(numbers, [1, 2, 3], "blank lines are skipped: {outcomes:#?}");
        assert!(outcomes.iter().all(|o| o["status"] == "answered"));
        // The later prompts went on the conversation: the demo model, which reports a follow-up
        // request's history as read from its prompt cache, says so in their usage.
        let cached: Vec<u64> = outcomes
            .iter()
            .map(|o| {
                o["usage"]["cached_input_tokens"]
                    .as_u64()
                    .expect("cached_input_tokens")
            })
            .collect();
        assert_eq!(cached[0], 0, "{outcomes:#?}");
        assert!(cached[1] > 0 && cached[2] > cached[1], "{outcomes:#?}");
        // One session: its transcript holds the three prompts, in order.
        let id = sessions[0]["id"].as_str().expect("a session id");
        let transcript = std::fs::read_to_string(
            state
                .path()
                .join(format!("aimon-console/sessions/{id}.jsonl")),
        )
        .expect("transcript");
        let prompts: Vec<String> = transcript
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["type"] == "prompt")
            .map(|r| r["text"].as_str().unwrap_or_default().to_string())
            .collect();
        assert_eq!(prompts, ["what is 2 plus 3", "hello", "what is 4 plus 5"]);
    }
}

#[test]
fn a_prompt_without_an_answer_stops_the_rest_and_an_empty_file_is_refused() {
    let state = tempfile::tempdir().unwrap();
    // A 400 is not retried: the first prompt fails at once.
    let (_model, url) = demo_model(&["--status", "400"]);
    let config = write_config(&format!("agent:\n  base_url: {url}\n  model: demo\n"));
    let file = state.path().join("prompts.txt");
    std::fs::write(&file, "first\nsecond\n").unwrap();
    let out = run(
        state.path(),
        &config.path,
        &["run", "--prompts", &file.to_string_lossy(), "--json"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let events = stdout_lines(&out);
    let outcomes = of_type(&events, "outcome");
    assert_eq!(outcomes.len(), 1, "{events:#?}");
    assert_eq!(outcomes[0]["status"], "model_failed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the prompts after prompt 1 are not asked"),
        "{stderr}"
    );
    std::fs::write(&file, "\n  \n").unwrap();
    let out = run(
        state.path(),
        &config.path,
        &["run", "--prompts", &file.to_string_lossy()],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds no prompt"));
}

/// A transcript as this program wrote it on 2026-12-05, before the providers (its calls and
/// usage in Chat Completions' shapes, its usage without a cached count;
/// `tests/fixtures/transcripts/`), still resumes: its turns, the tool call and its result
/// among them, are sent again with the next prompt, which is answered and recorded after them.
#[test]
fn a_transcript_written_before_still_resumes() {
    let state = tempfile::tempdir().unwrap();
    let sessions = state.path().join("aimon-console/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let id = "20261205-000000-fix0";
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/fixtures/transcripts/{id}.jsonl"));
    let before = std::fs::read_to_string(&fixture).expect("fixture");
    std::fs::write(sessions.join(format!("{id}.jsonl")), &before).unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.yaml");
    let out = run(
        state.path(),
        &example,
        &["run", "what is 2 plus 3", "--resume", id, "--json"],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = stdout_lines(&out);
    assert_eq!(of_type(&events, "session")[0]["resumed"], true);
    let outcome = of_type(&events, "outcome")[0];
    assert_eq!(outcome["status"], "answered", "{events:#?}");
    // The old turns went with the request: the demo model counts them as the cached prefix.
    assert!(
        outcome["usage"]["cached_input_tokens"].as_u64() > Some(1000),
        "{outcome:#}"
    );
    let after = std::fs::read_to_string(sessions.join(format!("{id}.jsonl"))).unwrap();
    assert!(after.starts_with(&before), "the old records were rewritten");
    assert!(after[before.len()..].contains(r#""type":"resumed""#));
    assert!(after[before.len()..].contains("what is 2 plus 3"));
}

/// The example's `demo-anthropic` profile (the demo model on the Messages API, its answers
/// carrying thinking blocks it refuses to see left out): a prompt with an approved call and a
/// follow-up prompt are answered, the thinking goes back with its answer (or the model would
/// refuse the request), the transcript keeps it, and each turn's usage, the cached part
/// included, reaches `run --json`.
#[test]
fn the_messages_api_profile_keeps_its_thinking_and_reports_its_usage() {
    let state = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.yaml");
    let out = run(
        state.path(),
        &example,
        &[
            "run",
            "--model",
            "demo-anthropic",
            "--prompts",
            "-",
            "--yes",
            "--json",
        ],
        Some("save a note called t1 saying hi\nwhat is 4 plus 5\n"),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = stdout_lines(&out);
    let outcomes = of_type(&events, "outcome");
    assert!(
        outcomes.iter().all(|o| o["status"] == "answered"),
        "{outcomes:#?}"
    );
    let turns = of_type(&events, "turn_ended");
    assert!(
        turns
            .iter()
            .all(|t| t["usage"]["input_tokens"].as_u64() > Some(0)),
        "{turns:#?}"
    );
    assert_eq!(turns[0]["finish"], "tool_calls", "{turns:#?}");
    assert!(
        outcomes[1]["usage"]["cached_input_tokens"].as_u64() > Some(0),
        "{outcomes:#?}"
    );
    let id = of_type(&events, "session")[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let transcript = std::fs::read_to_string(
        state
            .path()
            .join(format!("aimon-console/sessions/{id}.jsonl")),
    )
    .unwrap();
    let thought = transcript
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["type"] == "assistant" && r["reasoning"][0]["provider"] == "anthropic");
    assert!(thought.is_some(), "{transcript}");
}
