//! Declarative hooks end to end, over real processes: a `pre_tool_use` `mcp_tool` hook whose
//! demo-server tool answers `{"decision":"deny",…}` stops the call with that reason; a hook
//! whose server is down, one that times out and one that answers garbage each leave a warning
//! and the call goes on; a `command` hook exiting 2 denies with its stderr, one printing
//! `{"decision":"allow"}` skips the question; the other events reach their hooks (in `watch
//! --json` and through the runtime); a hook's own call runs no hooks.

mod common;

use std::time::Duration;

use aimon_console::config;
use aimon_console::runtime::{
    AgentRuntimeFactory, CallStatus, HookAnswer, HookOutcome, RuntimeEvent, RuntimeOptions,
};
use common::*;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// The JSON lines of `call --events --json`'s stdout.
fn lines(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

/// `notes` (trusted: echo read-only, write_note mutating, delete_note destructive), `guard`
/// (trusted, the hooks' server), then `more` YAML (more servers, `hooks:`, `policy:`).
fn config_with(m: &str, servers: &str, more: &str) -> TempConfig {
    write_config(&format!(
        "mcp:\n  servers:\n{}{}{servers}{more}",
        demo_server("notes", &[], "annotation_trust: trust", m),
        demo_server("guard", &[], "annotation_trust: trust", m),
    ))
}

#[test]
fn an_mcp_tool_hook_that_says_deny_stops_the_call_with_its_reason() {
    let m = marker("hook-deny");
    let cfg = config_with(
        &m,
        "",
        r#"hooks:
  - event: pre_tool_use
    match: {tool: "mcp__notes__delete_*"}
    action:
      mcp_tool:
        server: guard
        tool: echo
        arguments: {text: '{"decision":"deny","reason":"notes are kept: {{arguments.title}} ({{tool.side_effect}})"}'}
      timeout: 10s
"#,
    );
    // Even with --yes: a deny holds.
    let out = run(
        &[
            "call",
            "mcp__notes__delete_note",
            "--args",
            r#"{"title":"groceries"}"#,
            "--yes",
            "--events",
            "--json",
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let lines = lines(&out);
    let outcome = of_type(&lines, "outcome");
    assert_eq!(outcome.len(), 1, "{lines:#?}");
    assert_eq!(outcome[0]["status"], "denied");
    assert_eq!(
        outcome[0]["result"]["text"],
        "denied by hooks[0] (mcp_tool guard/echo): notes are kept: groceries (mutating)"
    );
    let hooks = of_type(&lines, "hook");
    assert_eq!(hooks.len(), 1, "{lines:#?}");
    let hook = hooks[0];
    assert_eq!(hook["event"], "pre_tool_use");
    assert_eq!(hook["action"], "mcp_tool guard/echo");
    assert_eq!(hook["tool"], "mcp__notes__delete_note");
    assert_eq!(hook["call_id"], outcome[0]["id"]);
    assert_eq!(hook["decision"], "deny");
    assert_eq!(hook["reason"], "notes are kept: groceries (mutating)");
    assert_eq!(hook["warning"], Value::Null);
    assert!(hook["elapsed_ms"].is_u64());
    // It never asked, and never ran.
    assert!(of_type(&lines, "approval_requested").is_empty());
    assert!(!lines
        .iter()
        .any(|l| l["type"] == "call_status" && l["status"] == "running"));

    // Without --json the reason is on stderr.
    let out = run(
        &[
            "call",
            "mcp__notes__delete_note",
            "--args",
            r#"{"title":"x"}"#,
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("denied: denied by hooks[0] (mcp_tool guard/echo): notes are kept: x"),
        "{err}"
    );
    // Another tool is not matched: it runs.
    let out = run(
        &["call", "mcp__notes__echo", "--args", r#"{"text":"hi"}"#],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(wait_gone(&m, Duration::from_secs(3)).is_empty());
}

#[test]
fn the_example_configs_hook_and_rule_work_offline() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.yaml");
    let out = run(
        &[
            "call",
            "mcp__notes__delete_note",
            "--args",
            r#"{"title":"groceries"}"#,
            "--yes",
        ],
        Some(&path),
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "denied by hooks[0] (mcp_tool notes-trusted/echo): notes on notes are kept (groceries)"
        ),
        "{err}"
    );
    // The rule: a mutating call runs without a question (there is no terminal, and no --yes).
    let out = run(
        &[
            "call",
            "mcp__live__change_tools",
            "--args",
            r#"{"action":"add","tool":"extra"}"#,
        ],
        Some(&path),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("refused"));
}

#[test]
fn hooks_that_fail_leave_a_warning_and_the_call_goes_on() {
    let m = marker("hook-fail");
    let cfg = config_with(
        &m,
        &demo_server("down", &["--exit-before-init", "3"], "", &m),
        r#"hooks:
  - event: pre_tool_use
    action:
      mcp_tool: {server: down, tool: echo, arguments: {text: '{"decision":"deny"}'}}
  - event: pre_tool_use
    action:
      mcp_tool: {server: guard, tool: slow, arguments: {steps: 100, step_ms: 100}}
      timeout: 400ms
  - event: pre_tool_use
    action:
      mcp_tool: {server: guard, tool: echo, arguments: {text: 'not json {{tool.name}}'}}
  - event: pre_tool_use
    action:
      mcp_tool: {server: guard, tool: no_such_tool}
  - event: pre_tool_use
    action:
      mcp_tool: {server: guard, tool: add, arguments: {a: 1, b: '{{arguments.text}}'}}
"#,
    );
    let started = std::time::Instant::now();
    let out = run(
        &[
            "call",
            "mcp__notes__echo",
            "--args",
            r#"{"text":"still here"}"#,
            "--events",
            "--json",
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines = lines(&out);
    let outcome = of_type(&lines, "outcome");
    assert_eq!(outcome[0]["status"], "ok", "{lines:#?}");
    assert_eq!(outcome[0]["result"]["text"], "still here");
    let warnings: Vec<String> = of_type(&lines, "hook")
        .iter()
        .map(|h| {
            assert_eq!(h["decision"], Value::Null, "{h}");
            h["warning"].as_str().unwrap_or("(none)").to_string()
        })
        .collect();
    assert_eq!(warnings.len(), 5, "{lines:#?}");
    assert!(
        warnings[0].starts_with("server down is down (exited: "),
        "{warnings:?}"
    );
    assert_eq!(warnings[1], "timed out after 400ms");
    assert_eq!(
        warnings[2],
        "the answer is not a JSON object: \"not json mcp__notes__echo\""
    );
    assert_eq!(warnings[3], "server guard has no tool no_such_tool");
    assert!(
        warnings[4].starts_with("its arguments do not match the input schema of guard/add"),
        "{warnings:?}"
    );
    // The slow hook was stopped at its timeout, not waited for (100 × 100 ms).
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "{:?}",
        started.elapsed()
    );
    assert!(wait_gone(&m, Duration::from_secs(3)).is_empty());
}

#[test]
fn command_hooks_deny_with_exit_2_and_allow_with_json() {
    let m = marker("hook-cmd");
    let dir = tempfile::tempdir().expect("temp dir");
    let seen = dir.path().join("event.json");
    let cfg = config_with(
        &m,
        "",
        &format!(
            r#"hooks:
  - event: pre_tool_use
    match: {{tool: "*write_note"}}
    action:
      command: [sh, -c, 'cat > {seen}; echo "no writes today" >&2; exit 2']
  - event: pre_tool_use
    match: {{server: notes, tool: delete_note}}
    action:
      command: [sh, -c, 'echo "{{\"decision\": \"allow\", \"reason\": \"cleanup time\"}}"']
"#,
            seen = seen.display()
        ),
    );
    let out = run(
        &[
            "call",
            "mcp__notes__write_note",
            "--args",
            r#"{"title":"t","body":"b"}"#,
            "--yes",
        ],
        Some(&cfg.path),
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("denied: denied by hooks[0] (command sh): no writes today"),
        "{err}"
    );
    // The hook was given the event on its stdin.
    let event: Value = serde_json::from_str(&std::fs::read_to_string(&seen).expect("stdin kept"))
        .expect("the event is JSON");
    assert_eq!(event["event"], "pre_tool_use");
    assert_eq!(event["tool"]["name"], "mcp__notes__write_note");
    assert_eq!(event["tool"]["server"], "notes");
    assert_eq!(event["tool"]["side_effect"], "mutating");
    // Its pin: the hash of its definition, and whether that is the one approved.
    assert_eq!(event["tool"]["pin"]["state"], "unpinned", "{event:#}");
    let pin = event["tool"]["pin"]["pin"].as_str().unwrap_or_default();
    assert!(pin.starts_with("sha256:") && pin.len() == 71, "{event:#}");
    assert_eq!(event["arguments"], json!({"title": "t", "body": "b"}));

    // The allow: a destructive call runs without asking (no terminal, no --yes), and does what
    // it does (the note is missing, so the server says so).
    let out = run(
        &[
            "call",
            "mcp__notes__delete_note",
            "--args",
            r#"{"title":"x"}"#,
            "--json",
        ],
        Some(&cfg.path),
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("call --json");
    assert_eq!(v["status"], "error", "{v}");
    assert_eq!(v["result"]["text"], "no note titled \"x\"");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("refused"));
    assert!(wait_gone(&m, Duration::from_secs(3)).is_empty());
}

#[test]
fn server_and_session_hooks_show_in_watch_json() {
    let m = marker("hook-watch");
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("events.log");
    let cfg = config_with(
        &m,
        &demo_server("broken", &["--exit-before-init", "3"], "", &m),
        &format!(
            r#"hooks:
  - event: session_start
    action: {{command: [sh, -c, 'cat >> {log}; echo >> {log}']}}
  - event: server_ready
    match: {{server: notes}}
    action: {{command: [sh, -c, 'cat >> {log}; echo >> {log}']}}
  - event: server_failed
    action:
      mcp_tool: {{server: guard, tool: write_note, arguments: {{title: 'failed {{{{server}}}}', body: '{{{{report.failure.class}}}}'}}}}
"#,
            log = log.display()
        ),
    );
    let mut child = std::process::Command::new(bin())
        .args(["--config"])
        .arg(&cfg.path)
        .args(["--log-file"])
        .arg(dir.path().join("log"))
        .args(["watch", "--json"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("watch");
    let stdout = child.stdout.take().expect("stdout");
    let watch = Background(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                if v["type"] == "hook" && tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    let mut hooks = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while hooks.len() < 3 && std::time::Instant::now() < deadline {
        if let Ok(v) = rx.recv_timeout(Duration::from_millis(200)) {
            hooks.push(v);
        }
    }
    drop(watch);
    let by_event = |e: &str| {
        hooks
            .iter()
            .find(|h| h["event"] == e)
            .unwrap_or_else(|| panic!("no {e} hook in {hooks:#?}"))
    };
    assert_eq!(by_event("session_start")["warning"], Value::Null);
    assert_eq!(by_event("server_ready")["server"], "notes");
    let failed = by_event("server_failed");
    assert_eq!(failed["server"], "broken");
    assert_eq!(failed["action"], "mcp_tool guard/write_note");
    assert_eq!(failed["warning"], Value::Null, "{failed}");
    // Only notes matched server_ready (guard and broken did not).
    assert_eq!(
        hooks
            .iter()
            .filter(|h| h["event"] == "server_ready")
            .count(),
        1
    );
    let written = std::fs::read_to_string(&log).expect("the command hooks wrote");
    let events: Vec<Value> = written
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("one JSON event a line"))
        .collect();
    let session = events
        .iter()
        .find(|e| e["event"] == "session_start")
        .expect("session_start");
    assert_eq!(session["servers"], json!(["notes", "guard", "broken"]));
    let ready = events
        .iter()
        .find(|e| e["event"] == "server_ready")
        .expect("server_ready");
    assert_eq!(ready["server"], "notes");
    assert_eq!(ready["report"]["status"], "ready");
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}

#[tokio::test]
async fn prompt_turn_and_post_hooks_through_the_runtime_and_no_hook_runs_for_a_hooks_call() {
    let m = marker("hook-rt");
    let dir = tempfile::tempdir().expect("temp dir");
    let post = dir.path().join("post.json");
    let cfg = config_with(
        &m,
        "",
        &format!(
            r#"policy:
  approval: never
hooks:
  - event: user_prompt
    action:
      mcp_tool: {{server: guard, tool: echo, arguments: {{text: 'prompt was {{{{prompt}}}}'}}}}
  - event: turn_end
    action: {{command: [sh, -c, 'exit 7']}}
  - event: pre_tool_use
    action:
      mcp_tool: {{server: guard, tool: echo, arguments: {{text: '{{"decision":"defer"}}'}}}}
  - event: post_tool_use
    match: {{server: notes}}
    action: {{command: [sh, -c, 'cat > {post}']}}
"#,
            post = post.display()
        ),
    );
    let config = config::load(&cfg.path).expect("config loads");
    let (events, mut stream) = AgentRuntimeFactory::events();
    let runtime = AgentRuntimeFactory::create(&config, RuntimeOptions::default(), events)
        .await
        .expect("runtime");
    runtime.wait_started().await;

    let runs = runtime
        .user_prompt_hooks("what is in my notes?", &CancellationToken::new())
        .await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].outcome, HookOutcome::Ran, "{runs:?}");
    let runs = runtime.turn_end_hooks(1, &CancellationToken::new()).await;
    assert_eq!(
        runs[0].outcome,
        HookOutcome::Warning("exited with code 7".into())
    );

    let out = runtime
        .call(
            "mcp__notes__write_note",
            json!({"title": "t", "body": "b"}),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(out.status, CallStatus::Ok, "{out:?}");
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&post).expect("post hook ran"))
        .expect("json");
    assert_eq!(seen["event"], "post_tool_use");
    assert_eq!(seen["status"], "ok");
    assert_eq!(seen["result"]["text"], "saved note \"t\"");
    assert_eq!(seen["call_id"], out.id);
    runtime.close().await;

    let mut hook_events = Vec::new();
    while let Some(event) = stream.recv().await {
        if let RuntimeEvent::HookRan(run) = event {
            hook_events.push(run);
        }
    }
    // user_prompt, turn_end, pre_tool_use (deferred), post_tool_use: the pre_tool_use hook's
    // own call of guard/echo ran no hook.
    let kinds: Vec<&str> = hook_events.iter().map(|r| r.event.as_str()).collect();
    assert_eq!(
        kinds,
        ["user_prompt", "turn_end", "pre_tool_use", "post_tool_use"]
    );
    assert_eq!(
        hook_events[2].outcome,
        HookOutcome::Decided {
            decision: HookAnswer::Defer,
            reason: None
        }
    );
    assert!(wait_gone(&m, Duration::from_secs(3)).is_empty());
}

/// The prompt's cancel (Ctrl-C in `run`, Esc in the console) ends its `user_prompt` and
/// `turn_end` hooks at once, their processes killed, rather than after their timeout.
#[tokio::test]
async fn a_cancelled_prompt_does_not_wait_for_its_hooks() {
    let m = marker("hook-cancel");
    let dir = tempfile::tempdir().expect("temp dir");
    let started = dir.path().join("started");
    let cfg = write_config(&format!(
        "mcp:\n  servers: []\nhooks:\n  - event: user_prompt\n    action: {{command: [sh, -c, 'echo {m} > {started}; exec sleep 60'], timeout: 60s}}\n  - event: turn_end\n    action: {{command: [sh, -c, 'exec sleep 60 {m}'], timeout: 60s}}\n",
        started = started.display()
    ));
    let config = config::load(&cfg.path).expect("config loads");
    let (events, _stream) = AgentRuntimeFactory::events();
    let runtime = AgentRuntimeFactory::create(&config, RuntimeOptions::default(), events)
        .await
        .expect("runtime");
    let cancel = CancellationToken::new();
    let cancelling = cancel.clone();
    let started_file = started.clone();
    tokio::spawn(async move {
        while !started_file.exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        cancelling.cancel();
    });
    let runs = tokio::time::timeout(
        Duration::from_secs(10),
        runtime.user_prompt_hooks("hi", &cancel),
    )
    .await
    .expect("the cancel ended the hook, not its 60 s timeout");
    assert_eq!(runs.len(), 1);
    assert!(
        matches!(&runs[0].outcome, HookOutcome::Warning(w) if w.contains("cancel")),
        "{runs:?}"
    );
    // Already cancelled: the turn_end hook does not start.
    let runs = tokio::time::timeout(Duration::from_secs(10), runtime.turn_end_hooks(1, &cancel))
        .await
        .expect("turn_end hooks end on the cancel");
    assert!(runs.is_empty(), "{runs:?}");
    runtime.close().await;
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}
