//! `aimon-console run` end to end: the real binary on `config.example.yaml` (which starts the
//! demo model itself), with and without `--yes`; `max_turns`; transcripts, `sessions` and
//! `--resume`; and the API key in no output and no file. (Signals while it starts: run_terminal.rs;
//! the model endpoint it starts: agent_endpoint.rs.)

mod common;

use std::path::Path;
use std::process::Output;

use common::{
    bin, demo_model, find_event as find, run_in_state, session_records, stdout_lines, write_config,
};
use serde_json::Value;

/// Runs the binary with `args`, stdin closed, the state dir (transcripts, the log) in `state`.
fn run_in(state: &Path, config: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    run_in_state(state, config, args, env, None)
}

fn example() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.yaml")
}

#[test]
fn save_a_note_with_yes_runs_write_note_approved_by_yes_then_answers() {
    let state = tempfile::tempdir().unwrap();
    let out = run_in(
        state.path(),
        &example(),
        &["run", "save a note called t1 saying hi", "--yes", "--json"],
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = stdout_lines(&out);
    let is_write = |e: &Value| {
        e["tool"]
            .as_str()
            .is_some_and(|t| t.ends_with("__write_note"))
    };
    let call = find(&events, "tool_call", is_write);
    assert_eq!(
        events[call]["arguments"],
        "{\"title\":\"t1\",\"body\":\"hi\"}"
    );
    // The agent's call is shown before the runtime starts it.
    let started = find(&events, "call_started", is_write);
    let approval = find(&events, "approval_answered", |e| e["by"] == "yes_flag");
    assert_eq!(events[approval]["decision"], "allow_once");
    let result = find(&events, "tool_result", is_write);
    assert_eq!(events[result]["status"], "ok");
    assert_eq!(events[result]["content"], "saved note \"t1\"");
    let answer = find(&events, "answer", |_| true);
    assert_eq!(
        events[answer]["text"],
        "(demo model) Done: saved note \"t1\"."
    );
    assert!(
        call < started && started < approval && approval < result && result < answer,
        "{events:#?}"
    );
    let outcome = events.last().unwrap();
    assert_eq!(outcome["type"], "outcome");
    assert_eq!(
        (outcome["status"].as_str(), outcome["exit_code"].as_u64()),
        (Some("answered"), Some(0))
    );

    // The transcript has the call and how it was approved.
    let id = outcome["session"].as_str().expect("a session id");
    let records = session_records(state.path(), id);
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "session",
            "prompt",
            "assistant",
            "tool_call",
            "approval",
            "tool_result",
            "assistant",
            "answer"
        ]
    );
    assert_eq!(records[4]["by"], "yes_flag");

    // --resume continues it; sessions lists it with both prompts.
    let again = run_in(
        state.path(),
        &example(),
        &["run", "what is 2 plus 3", "--resume", id, "--json"],
        &[],
    );
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let again = stdout_lines(&again);
    assert_eq!(again[0]["resumed"], true);
    assert_eq!(again.last().unwrap()["session"], id);
    let listed = run_in(state.path(), &example(), &["sessions", "--json"], &[]);
    let listed: Value = serde_json::from_slice(&listed.stdout).expect("sessions --json");
    assert_eq!(listed[0]["id"], id);
    assert_eq!(listed[0]["prompts"], 2);
    assert_eq!(listed[0]["config"], example().display().to_string());
    // The table says each session's config.
    let table = run_in(state.path(), &example(), &["sessions"], &[]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("CONFIG"), "{table}");
    let row = table
        .lines()
        .find(|l| l.starts_with(id))
        .unwrap_or_default();
    assert!(row.contains("config.example.yaml"), "{table}");
}

#[test]
fn without_yes_and_without_a_terminal_the_call_is_refused_and_the_model_told() {
    let state = tempfile::tempdir().unwrap();
    let out = run_in(
        state.path(),
        &example(),
        &["run", "save a note called t1 saying hi", "--json"],
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = stdout_lines(&out);
    let approval = find(&events, "approval_answered", |_| true);
    assert_eq!(
        (
            events[approval]["decision"].as_str(),
            events[approval]["by"].as_str()
        ),
        (Some("deny"), Some("no_terminal"))
    );
    let result = find(&events, "tool_result", |_| true);
    // Refused, not denied: nobody said no, nobody could be asked.
    assert_eq!(events[result]["status"], "refused");
    let told = events[result]["content"].as_str().unwrap();
    assert!(
        told.contains("nobody could be asked") && told.contains("there is no terminal to ask on"),
        "{told}"
    );
    let answer = find(&events, "answer", |_| true);
    assert!(events[answer]["text"]
        .as_str()
        .unwrap()
        .contains("That did not work"));
    let outcome = events.last().unwrap();
    assert_eq!(
        (
            outcome["status"].as_str(),
            outcome["tool_failures"].as_u64()
        ),
        (Some("answered"), Some(1))
    );
}

#[test]
fn a_model_that_calls_tools_forever_stops_at_max_turns() {
    let state = tempfile::tempdir().unwrap();
    let (_model, url) = demo_model(&["--loop-tools"]);
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}agent:\n  base_url: {url}\n  model: demo\n  max_turns: 4\n",
        common::demo_server("notes", &[], "annotation_trust: trust", "unused")
    ));
    let out = run_in(state.path(), &config.path, &["run", "go on", "--json"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let events = stdout_lines(&out);
    let stopped = find(&events, "stopped", |_| true);
    assert_eq!(events[stopped]["reason"], "max_turns");
    assert_eq!(
        events[stopped]["message"],
        "stopped after 4 model turns (max_turns) without a final answer: the model kept calling tools"
    );
    assert_eq!(events.last().unwrap()["turns"], 4);
    // --max-turns overrides the profile; the human output says why it stopped.
    let out = run_in(
        state.path(),
        &config.path,
        &["run", "go on", "--max-turns", "2"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The same words as the JSON's message and docs/agent.md.
    assert!(
        stderr.contains(
            "stopped after 2 model turns (max_turns) without a final answer: the model kept calling tools"
        ),
        "{stderr}"
    );
}

#[test]
fn the_api_key_is_sent_but_never_shown_logged_or_written() {
    const KEY: &str = "sk-test-0123456789-do-not-show";
    let state = tempfile::tempdir().unwrap();
    let (_model, url) = demo_model(&["--api-key", KEY]);
    let config = write_config(&format!(
        "agent:\n  base_url: {url}\n  model: demo\n  api_key: ${{AIMON_TEST_KEY}}\n"
    ));
    let good = run_in(
        state.path(),
        &config.path,
        &["run", "hello", "--json"],
        &[("AIMON_TEST_KEY", KEY)],
    );
    assert_eq!(
        good.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&good.stderr)
    );
    let human = run_in(
        state.path(),
        &config.path,
        &["run", "hello"],
        &[("AIMON_TEST_KEY", KEY)],
    );
    assert_eq!(human.status.code(), Some(0));
    // A wrong key: the 401 and its hint, and neither key anywhere.
    let wrong = format!("{KEY}-wrong");
    let bad = run_in(
        state.path(),
        &config.path,
        &["run", "hello"],
        &[("AIMON_TEST_KEY", &wrong)],
    );
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("model error: http_status: HTTP 401") && stderr.contains("api_key"),
        "{stderr}"
    );
    for out in [&good, &human, &bad] {
        for text in [&out.stdout, &out.stderr] {
            assert!(
                !String::from_utf8_lossy(text).contains(KEY),
                "the key was printed"
            );
        }
    }
    let mut files = 0;
    for entry in walk(state.path()) {
        files += 1;
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "the key is in {}",
            entry.display()
        );
    }
    assert!(files >= 4, "the log and three transcripts: {files}");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn without_an_agent_section_run_is_a_config_error() {
    let state = tempfile::tempdir().unwrap();
    let config = write_config("mcp: {}\n");
    let out = run_in(state.path(), &config.path, &["run", "hi"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no agent: section"));
    let example = run_in(
        state.path(),
        &example(),
        &["run", "hi", "--model", "nope"],
        &[],
    );
    assert_eq!(example.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&example.stderr).contains("no model profile named \"nope\""));
}

#[test]
fn an_empty_prompt_is_refused_before_anything_starts() {
    let state = tempfile::tempdir().unwrap();
    // A server that leaves a file when it is started, and a model that never would answer.
    let started = state.path().join("started");
    let config = write_config(&format!(
        "mcp:\n  servers:\n    - name: s\n      command: /bin/sh\n      args: [-c, \"touch {}\"]\nagent:\n  base_url: http://127.0.0.1:{}/v1\n  model: demo\n",
        started.display(),
        common::free_port()
    ));
    for prompt in ["", "   ", "\t\n"] {
        let out = run_in(state.path(), &config.path, &["run", prompt], &[]);
        assert_eq!(out.status.code(), Some(2), "{prompt:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("the prompt is empty"), "{stderr}");
    }
    assert!(!started.exists(), "a server was started");
    assert!(
        !state.path().join("aimon-console/sessions").exists(),
        "a session was recorded"
    );
}

#[test]
fn resume_continues_with_the_sessions_profile_and_says_which() {
    let state = tempfile::tempdir().unwrap();
    let (_model, url) = demo_model(&[]);
    let profiles = |other: bool| {
        let mut yaml = format!(
            "agent:\n  default: main\n  models:\n    main:\n      base_url: {url}\n      model: main-model\n"
        );
        if other {
            yaml.push_str(&format!(
                "    other:\n      base_url: {url}\n      model: other-model\n"
            ));
        }
        write_config(&yaml)
    };
    let both = profiles(true);
    let first = run_in(
        state.path(),
        &both.path,
        &["run", "hello", "--model", "other", "--json"],
        &[],
    );
    assert_eq!(first.status.code(), Some(0));
    let first = stdout_lines(&first);
    let id = first[0]["id"].as_str().expect("a session id").to_string();
    // No --model: the session's profile, and the human output names it.
    let again = run_in(
        state.path(),
        &both.path,
        &["run", "hello again", "--resume", &id, "--json"],
        &[],
    );
    assert_eq!(stdout_lines(&again)[0]["profile"], "other");
    let human = run_in(
        state.path(),
        &both.path,
        &["run", "and again", "--resume", &id],
        &[],
    );
    assert_eq!(human.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&human.stderr);
    assert!(
        stderr.contains(&format!(
            "continuing session {id} with profile other (model other-model; the session's)"
        )),
        "{stderr}"
    );
    // --model still picks.
    let picked = run_in(
        state.path(),
        &both.path,
        &["run", "hi", "--resume", &id, "--model", "main", "--json"],
        &[],
    );
    assert_eq!(stdout_lines(&picked)[0]["profile"], "main");
    // The last profile used is the session's now; gone from the config: the default, and why.
    let back = run_in(
        state.path(),
        &both.path,
        &["run", "hi", "--resume", &id, "--json"],
        &[],
    );
    assert_eq!(stdout_lines(&back)[0]["profile"], "main");
    let fresh = run_in(
        state.path(),
        &both.path,
        &["run", "hello", "--model", "other", "--json"],
        &[],
    );
    let fresh = stdout_lines(&fresh)[0]["id"]
        .as_str()
        .expect("an id")
        .to_string();
    let one = profiles(false);
    let gone = run_in(
        state.path(),
        &one.path,
        &["run", "hi", "--resume", &fresh],
        &[],
    );
    assert_eq!(gone.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&gone.stderr);
    assert!(
        stderr.contains(
            "with profile main (model main-model; agent.default: the session's profile other is no longer in the config)"
        ),
        "{stderr}"
    );
}

#[test]
fn the_console_checks_model_and_resume_off_a_terminal_too() {
    // stdout is a pipe here: the console falls back to the check report, but only after its
    // options passed (docs/agent.md: 2 for an unknown --model or --resume id).
    let state = tempfile::tempdir().unwrap();
    for args in [["--model", "nope"], ["--resume", "nope"]] {
        let out = run_in(state.path(), &example(), &args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "no check report: {args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("nope"), "{stderr}");
    }
}

/// A turn's records are on disk while its call runs, not only when the prompt ends: read while
/// the `slow` call waits, the transcript holds the model's answer that asked for it and the
/// call, and no result yet.
#[test]
fn a_turn_is_on_disk_while_its_call_runs() {
    use std::io::BufRead;
    let state = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(bin())
        .arg("--config")
        .arg(example())
        .arg("--log-file")
        .arg(state.path().join("aimon.log"))
        .args(["run", "wait 30 seconds", "--json"])
        .env("XDG_STATE_HOME", state.path())
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run aimon-console");
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let slow = |e: &Value| e["tool"].as_str().is_some_and(|t| t.ends_with("__slow"));
    loop {
        let line = lines.next().expect("run ended before the call").unwrap();
        let event: Value = serde_json::from_str(&line).unwrap();
        if event["type"] == "call_started" && slow(&event) {
            break;
        }
    }
    let sessions = state.path().join("aimon-console/sessions");
    let file = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let id = file
        .path()
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let records = session_records(state.path(), &id);
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["session", "prompt", "assistant", "tool_call"]);
    let asked = records[2]["tool_calls"][0]["name"].as_str().unwrap_or("");
    assert!(asked.ends_with("__slow"), "{records:#?}");
    assert!(slow(&records[3]), "{records:#?}");
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGTERM) };
    // Cancelled as a signal cancels a run; the call's result comes to the transcript then.
    assert_eq!(child.wait().unwrap().code(), Some(1));
    let records = session_records(state.path(), &id);
    assert!(
        records
            .iter()
            .any(|r| r["type"] == "tool_result" && slow(r)),
        "{records:#?}"
    );
}
