//! The model endpoint `run` starts itself (a profile's `command:`): killed when `run` exits,
//! killed with it when `run` is killed outright, and one that cannot start reported like any
//! model failure (`endpoint_failed`), with a transcript `--resume` can go on from.

mod common;

use common::{bin, find_event as find, run_in_state, session_records, stdout_lines, write_config};
use serde_json::Value;

#[test]
fn a_started_endpoint_is_killed_on_exit_and_one_that_fails_says_how() {
    let state = tempfile::tempdir().unwrap();
    let m = common::marker("model-endpoint");
    let config = write_config(&format!(
        "agent:\n  command: {}\n  args: [demo-model]\n  env: {{AIMON_TEST_MARKER: {m}}}\n  model: demo\n",
        bin()
    ));
    let out = run_in_state(
        state.path(),
        &config.path,
        &["run", "what is 2 plus 3"],
        &[],
        None,
    );
    // No tools configured but the local ones: the demo model says it has no add tool.
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("none is on offer"));
    assert!(common::wait_gone(&m, std::time::Duration::from_secs(10)).is_empty());

    for (command, said) in [
        ("/bin/false", "exited before printing its base URL"),
        ("/bin/echo", "first line is not a base URL"),
        (
            "/nonexistent/model-server",
            "cannot start the model endpoint",
        ),
    ] {
        let config = write_config(&format!(
            "agent:\n  command: {command}\n  args: [hello]\n  model: demo\n  request_timeout: 5s\n"
        ));
        let out = run_in_state(state.path(), &config.path, &["run", "hi"], &[], None);
        assert_eq!(out.status.code(), Some(1), "{command}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("model error: endpoint_failed") && stderr.contains(said),
            "{command}: {stderr}"
        );
    }
}

#[test]
fn a_run_killed_outright_takes_its_endpoint_and_servers_with_it() {
    use std::io::BufRead;
    let state = tempfile::tempdir().unwrap();
    let (model, server) = (
        common::marker("killed-endpoint"),
        common::marker("killed-server"),
    );
    let config = write_config(&format!(
        "agent:\n  command: {}\n  args: [demo-model]\n  env: {{AIMON_TEST_MARKER: {model}}}\n  model: demo\nmcp:\n  servers:\n{}",
        bin(),
        common::demo_server("notes", &[], "", &server)
    ));
    let mut child = std::process::Command::new(bin())
        .arg("--config")
        .arg(&config.path)
        .arg("--log-file")
        .arg(state.path().join("aimon.log"))
        .args(["run", "wait 30 seconds", "--json"])
        .env("XDG_STATE_HOME", state.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run aimon-console");
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    loop {
        let line = lines.next().expect("run ended before the call").unwrap();
        let event: Value = serde_json::from_str(&line).unwrap();
        if event["type"] == "call_started" {
            break;
        }
    }
    assert_eq!(common::processes_with(&model).len(), 1, "the endpoint runs");
    assert!(
        !common::processes_with(&server).is_empty(),
        "the server runs"
    );
    // SIGKILL: no Drop, no signal handler, no close runs in `run`.
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGKILL) };
    child.wait().unwrap();
    let wait = std::time::Duration::from_secs(10);
    let left = common::wait_gone(&model, wait);
    assert!(left.is_empty(), "the model endpoint outlived run: {left:?}");
    let left = common::wait_gone(&server, wait);
    assert!(left.is_empty(), "the server outlived run: {left:?}");
}

#[test]
fn an_endpoint_that_cannot_start_is_recorded_and_reported_like_any_model_failure() {
    let state = tempfile::tempdir().unwrap();
    let config = write_config(
        "agent:\n  command: /nonexistent/model-bin\n  model: demo\n  request_timeout: 5s\n",
    );
    let out = run_in_state(
        state.path(),
        &config.path,
        &["run", "what is 2 plus 3", "--json"],
        &[],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let events = stdout_lines(&out);
    let stopped = find(&events, "stopped", |_| true);
    assert_eq!(events[stopped]["reason"], "model_failed");
    assert_eq!(events[stopped]["error"]["class"], "endpoint_failed");
    let outcome = events.last().unwrap();
    assert_eq!(outcome["type"], "outcome");
    assert_eq!(outcome["error"]["class"], "endpoint_failed");
    let id = outcome["session"].as_str().expect("a session id");
    // The transcript has the prompt and why it stopped, so --resume has something to continue.
    let records = session_records(state.path(), id);
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["session", "prompt", "stopped"]);
    assert_eq!(records[1]["text"], "what is 2 plus 3");
    assert_eq!(records[2]["reason"], "model_failed");
    let listed = run_in_state(
        state.path(),
        &config.path,
        &["sessions", "--json"],
        &[],
        None,
    );
    let listed: Value = serde_json::from_slice(&listed.stdout).expect("sessions --json");
    assert_eq!(listed[0]["prompts"], 1);
}
