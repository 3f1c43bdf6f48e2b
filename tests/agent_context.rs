//! Context that lasts: a tool result over `max_result_tokens` reaches the model cut to its head
//! and tail, the whole kept for `read_result` (through the gate) and in the transcript and the
//! events; the meter after each turn; compaction when the window is reached, kept in the
//! transcript and continued by `--resume`.

mod common;

use aimon_console::runtime::{AgentRuntimeFactory, CallStatus, RuntimeOptions};
use common::{
    demo_server, marker, of_type, process_state_home, run_in_state, session_records, stdout_lines,
    write_config,
};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// The size of the padded result (`demo-server --result-pad`).
const BIG: usize = 5_000_000;

/// A 5 MB result: the model is sent its head and tail within `max_result_tokens` with a note;
/// the demo model, asked for the whole of it, reads on through `read_result` (a call through the
/// gate like any other); the events and the transcript have it whole; and `read_result` pages
/// through the rest of it, through the runtime's gate, back to the very same bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5_mb_result_is_cut_for_the_model_kept_whole_and_read_back_in_pages() {
    let state = process_state_home("context");
    let m = marker("context-big");
    let script = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        script.path(),
        json!([{"text": "Echoing.", "tool_calls": [{"name": "echo", "arguments": {"text": "start"}}]}])
            .to_string(),
    )
    .unwrap();
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}agent:\n  command: {}\n  args: [demo-model, --script, {}]\n  model: demo\n  max_turns: 3\n  max_result_tokens: 2000\n",
        demo_server("big", &["--result-pad", &BIG.to_string()], "", &m),
        common::bin(),
        script.path().display()
    ));
    let out = run_in_state(
        state,
        &config.path,
        &[
            "run",
            "echo start and show me the whole result",
            "--yes",
            "--json",
        ],
        &[],
        None,
    );
    let events = stdout_lines(&out);
    let results = of_type(&events, "tool_result");
    assert!(
        results.len() >= 2,
        "{:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The event (what the console and `run` show) holds the whole result.
    let whole = results[0]["content"].as_str().expect("content");
    assert!(whole.len() > BIG, "{}", whole.len());
    // The transcript too; what the model was sent is within the budget, with the note.
    let id = of_type(&events, "session")[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let records = session_records(state, &id);
    let result = records
        .iter()
        .find(|r| r["type"] == "tool_result")
        .expect("a tool_result record");
    assert_eq!(result["content"].as_str().map(str::len), Some(whole.len()));
    let sent = result["sent"].as_str().expect("what the model was sent");
    assert!(sent.len() <= 2000 * 4 + 200, "{}", sent.len());
    assert!(sent.starts_with("start"), "{sent:.100}");
    // The model read on through read_result, which went through the gate as a read-only call.
    let calls = of_type(&events, "tool_call");
    assert!(calls[1]["tool"] == "read_result", "{calls:#?}");
    let arguments: Value = serde_json::from_str(calls[1]["arguments"].as_str().unwrap()).unwrap();
    let offset = arguments["offset"].as_u64().unwrap() as usize;
    assert_eq!(results[1]["status"], "ok", "{:#}", results[1]);
    let page = results[1]["content"].as_str().unwrap();
    let limit = arguments["limit"].as_u64().unwrap() as usize;
    assert!(
        page.starts_with(&whole[offset..offset + 100]),
        "{page:.200}"
    );
    assert!(limit <= 2000 * 4, "{limit}");

    // The rest, page by page through the runtime's gate: the very same bytes.
    let config = aimon_console::config::load(&config.path).expect("config");
    let (sink, _stream) = AgentRuntimeFactory::events();
    let runtime = AgentRuntimeFactory::create(&config, RuntimeOptions::default(), sink)
        .await
        .expect("runtime");
    let kept = arguments["id"].as_str().unwrap();
    let mut read = whole[..offset].to_string();
    let mut at = offset;
    loop {
        let outcome = runtime
            .call(
                "read_result",
                json!({"id": kept, "offset": at, "limit": 65536}),
                CancellationToken::new(),
            )
            .await;
        assert_eq!(outcome.status, CallStatus::Ok, "{}", outcome.result.text);
        let text = &outcome.result.text;
        let (body, note) = text.rsplit_once("\n[bytes ").expect("a page note");
        read.push_str(body);
        at += body.len();
        if note.ends_with("the end]") {
            break;
        }
    }
    assert_eq!(read.len(), whole.len());
    assert!(read == whole, "the pages differ from the result");
    runtime.close().await;
    assert!(common::wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}

/// 100 tools over 10 servers against a 4,096-token window: their definitions are far more than
/// `tool_search`'s 10 %, so the model is offered `search_tools` instead; the demo model finds
/// `write_note` through it and calls it, through the gate (`--yes` approves it); the offered
/// definitions stay within the share; and `usage --json` counts the definitions by server, the
/// parts adding up to the whole.
#[test]
fn with_100_tools_the_model_finds_its_tool_through_search_and_usage_adds_up() {
    let state = tempfile::tempdir().unwrap();
    let m = marker("context-search");
    let mut servers = String::new();
    for i in 0..10 {
        let only = if i == 0 { "write_note" } else { "add" };
        servers.push_str(&demo_server(
            &format!("s{i}"),
            &["--only-tools", only, "--extra-tools", "9"],
            "",
            &m,
        ));
    }
    let config = write_config(&format!(
        "mcp:\n  servers:\n{servers}agent:\n  command: {}\n  args: [demo-model]\n  model: demo\n  max_turns: 4\n  context_window: 4096\n  tool_search: auto:10%\n",
        common::bin()
    ));
    let out = run_in_state(
        state.path(),
        &config.path,
        &["run", "save a note called t1 saying hi", "--yes", "--json"],
        &[],
        None,
    );
    let events = stdout_lines(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{events:#?}");
    let started = of_type(&events, "turn_started");
    // Turn 1 offers the search (and read_result), not the 100 definitions.
    let first: Vec<&str> = started[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        first.contains(&"search_tools") && first.len() <= 2,
        "{first:?}"
    );
    let calls = of_type(&events, "tool_call");
    assert_eq!(calls[0]["tool"], "search_tools", "{calls:#?}");
    assert_eq!(calls[1]["tool"], "mcp__s0__write_note", "{calls:#?}");
    // The call went through the gate: --yes approved the mutating tool.
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "approval_answered" && e["by"] == "yes_flag"),
        "{events:#?}"
    );
    let results = of_type(&events, "tool_result");
    assert_eq!(results[1]["status"], "ok", "{results:#?}");
    // The definitions offered in the call's turn, within 10 % of the window.
    let usage = run_in_state(state.path(), &config.path, &["usage", "--json"], &[], None);
    let usage: Value = serde_json::from_slice(&usage.stdout).expect("usage JSON");
    let by_server = usage["tools"]["by_server"].as_object().expect("by server");
    assert_eq!(by_server.len(), 11, "ten servers and local: {usage:#}");
    let sum: u64 = by_server.values().filter_map(Value::as_u64).sum();
    assert_eq!(sum, usage["tools"]["total"].as_u64().unwrap(), "{usage:#}");
    assert!(
        sum > 4096 / 10,
        "the whole list is over the share: {usage:#}"
    );
    let second: Vec<&str> = started[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(second.contains(&"mcp__s0__write_note"), "{second:?}");
    let meters = of_type(&events, "context");
    assert!(
        meters
            .iter()
            .all(|c| c["tools"].as_u64().is_some_and(|t| t < 4096 / 10)),
        "{meters:#?}"
    );
    assert!(common::wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}
