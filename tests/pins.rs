//! Pinned tool definitions over real processes: a demo server that pulls the rug
//! (`--rug-pull`: after the first `write_note` its description and schema change, announced with
//! `tools/list_changed`, and every later start serves the changed tool). The `always` rule the
//! console wrote stops applying, the approval in a real terminal shows the diff, approving pins
//! the new definition in the rule, and `tools --json` shows the pin state at each step.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::tmux::Tmux;
use common::*;
use serde_json::Value;

/// `tools --json` on `config`, its pins kept under `state`: `write_note`'s `pin` object.
fn write_note_pin(config: &Path, state: &Path) -> Value {
    let out = Command::new(bin())
        .arg("--config")
        .arg(config)
        .arg("--log-file")
        .arg(state.join("tools.log"))
        .args(["tools", "--json"])
        .env("XDG_STATE_HOME", state)
        .stdin(Stdio::null())
        .output()
        .expect("run tools --json");
    assert!(out.status.success(), "{out:?}");
    let list: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    tool(&list["tools"], "mcp__notes__write_note")["pin"].clone()
}

/// The file at `path` once it holds `needle` (the console writes it in the background).
fn file_with(path: &Path, needle: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains(needle) {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{needle:?} never written; the file:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Calls `write_note` from the Tools pane with the form's fields typed in order.
fn call_write_note(t: &Tmux, fields: &[&str]) {
    t.keys(&["3", "/"]);
    t.text("notes__write");
    t.keys(&["Enter", "Enter"]);
    t.wait_for("Ctrl-S send", Duration::from_secs(5));
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            t.keys(&["Down"]);
        }
        t.text(field);
    }
    t.keys(&["C-s"]);
}

#[test]
fn a_rug_pull_stops_the_always_rule_and_the_approval_shows_the_diff() {
    let m = marker("pins");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let pulled = dir.path().join("pulled");
    let config = dir.path().join("aimon.yaml");
    let rug = pulled.display().to_string();
    let notes = demo_server(
        "notes",
        &["--rug-pull", &rug],
        "annotation_trust: trust",
        &m,
    );
    std::fs::write(&config, format!("mcp:\n  servers:\n{notes}")).unwrap();

    // Before anything is approved: not pinned.
    let before = write_note_pin(&config, &state);
    assert_eq!(before["state"], "unpinned", "{before}");
    let first = before["pin"].as_str().unwrap().to_string();
    assert!(first.starts_with("sha256:") && first.len() == 71, "{first}");

    let env = format!("XDG_STATE_HOME={}", state.display());
    let t = Tmux::console(dir.path(), &config, &env, "", "1/1 ready");

    // The first call: A writes the rule, with the pin of what was approved.
    call_write_note(&t, &["first", "one"]);
    t.wait_for_question("Approval needed", Duration::from_secs(5));
    t.keys(&["A"]);
    t.wait_for_row("#1", "ok");
    let written = file_with(&config, &format!("pin: {first}"));
    assert_eq!(written.matches("decision: allow").count(), 1, "{written}");
    // The server changed write_note after that call; the console lists it again.
    t.wait_for("tools listed again", Duration::from_secs(10));

    // The Tools pane marks it.
    t.keys(&["3", "/"]);
    t.text("notes__write");
    t.keys(&["Enter"]);
    let screen = t.wait_for("changed since approved", Duration::from_secs(5));
    assert!(screen.contains("≠ mcp__notes__write_note"), "{screen}");
    t.keys(&["Escape"]);

    // Headless, a fresh start sees the change too.
    let changed = write_note_pin(&config, &state);
    assert_eq!(changed["state"], "changed", "{changed}");
    assert_eq!(changed["approved"], first.as_str(), "{changed}");
    let second = changed["pin"].as_str().unwrap().to_string();
    assert_ne!(second, first);
    assert!(
        changed["by"]
            .as_str()
            .unwrap()
            .starts_with("policy.rules[0]"),
        "{changed}"
    );

    // The next call: the rule waits; the question shows what changed.
    call_write_note(&t, &["second", "two"]);
    let screen = t.wait_for_question("CHANGED since approved", Duration::from_secs(5));
    assert!(screen.contains("your always rule (A)"), "{screen}");
    assert!(screen.contains("description:"), "{screen}");
    assert!(
        screen.contains("- Save a note under a title; an existing"),
        "{screen}"
    );
    assert!(
        screen.contains("+ Save a note under a title, with tags;"),
        "{screen}"
    );
    assert!(screen.contains("inputSchema:"), "{screen}");
    assert!(screen.contains("+     \"tags\": {"), "{screen}");
    // A pins the new definition: the same rule, its pin replaced.
    t.keys(&["A"]);
    t.wait_for_row("#2", "ok");
    let written = file_with(&config, &format!("pin: {second}"));
    assert!(!written.contains(&first), "{written}");
    assert_eq!(written.matches("decision: allow").count(), 1, "{written}");

    // A third call runs under the rule, without a question.
    call_write_note(&t, &["third", "three"]);
    t.wait_for_row("#3", "ok");
    let screen = t.screen();
    assert!(!screen.contains("Approval needed"), "{screen}");

    let after = write_note_pin(&config, &state);
    assert_eq!(after["state"], "pinned", "{after}");
    assert_eq!(after["pin"], second.as_str(), "{after}");

    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}
