//! Hooks and the agent, end to end (`run` with the demo model): the prompt runs the
//! `user_prompt` hooks, each turn's end the `turn_end` hooks, and a `pre_tool_use` hook's deny
//! stops the model's call with its reason, which is what the model is told; every run is a
//! `hook` event on `run --json` and a `hook` record in the transcript.

mod common;

use std::process::{Command, Stdio};

use common::{bin, demo_model, demo_server, marker, wait_gone, write_config};
use serde_json::Value;

#[test]
fn the_agents_prompt_turns_and_calls_run_their_hooks_into_the_transcript() {
    let m = marker("agent-hooks");
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let prompt_seen = dir.path().join("prompt.json");
    let turns_seen = dir.path().join("turns.log");
    let (_model, url) = demo_model(&[]);
    let config = write_config(&format!(
        r#"mcp:
  servers:
{server}agent:
  base_url: {url}
  model: demo
hooks:
  - event: user_prompt
    action: {{command: [sh, -c, 'cat > {prompt}']}}
  - event: pre_tool_use
    match: {{tool: "*__write_note"}}
    action: {{command: [sh, -c, 'echo "no notes today" >&2; exit 2']}}
  - event: turn_end
    action: {{command: [sh, -c, 'cat >> {turns}; echo >> {turns}']}}
"#,
        server = demo_server("notes", &[], "annotation_trust: trust", &m),
        prompt = prompt_seen.display(),
        turns = turns_seen.display(),
    ));
    let out = Command::new(bin())
        .arg("--config")
        .arg(&config.path)
        .arg("--log-file")
        .arg(state.path().join("aimon.log"))
        .args(["run", "save a note called t1 saying hi", "--yes", "--json"])
        .env("XDG_STATE_HOME", state.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let of = |kind: &str| -> Vec<&Value> { events.iter().filter(|e| e["type"] == kind).collect() };

    // The model's write_note was denied by the hook (even with --yes), and it was told why.
    let result = of("tool_result")
        .into_iter()
        .find(|e| e["tool"] == "mcp__notes__write_note")
        .unwrap_or_else(|| panic!("no write_note result: {events:#?}"));
    assert_eq!(result["status"], "denied");
    assert_eq!(
        result["content"],
        "not run: denied by hooks[1] (command sh): no notes today"
    );
    assert!(of("approval_requested").is_empty(), "{events:#?}");
    let hooks: Vec<(String, Value)> = of("hook")
        .iter()
        .map(|h| {
            (
                h["event"].as_str().unwrap_or("").to_string(),
                h["decision"].clone(),
            )
        })
        .collect();
    assert!(
        hooks.contains(&("pre_tool_use".to_string(), Value::from("deny"))),
        "{hooks:?}"
    );
    assert!(hooks.iter().any(|(e, _)| e == "user_prompt"), "{hooks:?}");
    assert!(hooks.iter().any(|(e, _)| e == "turn_end"), "{hooks:?}");

    // The hooks were given their events.
    let prompt: Value =
        serde_json::from_str(&std::fs::read_to_string(&prompt_seen).expect("prompt hook ran"))
            .expect("JSON");
    assert_eq!(prompt["event"], "user_prompt");
    assert_eq!(prompt["prompt"], "save a note called t1 saying hi");
    let turns: Vec<Value> = std::fs::read_to_string(&turns_seen)
        .expect("turn_end hooks ran")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert!(!turns.is_empty());
    assert_eq!(
        turns[0],
        serde_json::json!({"event": "turn_end", "turn": 1})
    );

    // The transcript keeps every run, in place.
    let outcome = events.last().expect("an outcome line");
    let id = outcome["session"].as_str().expect("a session id");
    let records: Vec<Value> = std::fs::read_to_string(
        state
            .path()
            .join(format!("aimon-console/sessions/{id}.jsonl")),
    )
    .expect("transcript")
    .lines()
    .map(|l| serde_json::from_str(l).expect("JSON"))
    .collect();
    let kinds: Vec<String> = records
        .iter()
        .map(|r| match r["type"].as_str() {
            Some("hook") => format!("hook:{}", r["event"].as_str().unwrap_or("")),
            Some(other) => other.to_string(),
            None => String::new(),
        })
        .collect();
    assert_eq!(
        &kinds[..7],
        [
            "session",
            "prompt",
            "hook:user_prompt",
            "assistant",
            "tool_call",
            "hook:pre_tool_use",
            "tool_result",
        ],
        "{kinds:?}"
    );
    assert_eq!(kinds[7], "hook:turn_end", "{kinds:?}");
    let deny = &records[5];
    assert_eq!(deny["decision"], "deny");
    assert_eq!(deny["reason"], "no notes today");
    assert_eq!(deny["action"], "command sh");
    assert_eq!(deny["turn"], 1);
    assert!(
        deny["call_id"].is_string() && deny["runtime_id"].is_u64(),
        "{deny}"
    );
    assert!(wait_gone(&m, std::time::Duration::from_secs(3)).is_empty());
}
