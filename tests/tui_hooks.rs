//! Hooks and lasting rules in the console, in a real terminal (tmux) against demo servers: a
//! `pre_tool_use` hook's deny stops a call with its reason; `A` in the approval modal (asked
//! once more for a destructive tool) writes a rule into the config file, every comment kept
//! byte for byte; the next call runs without asking, and after a restart of the console too;
//! revoking the rule in `L` removes it from the file, and the tool asks again.

mod common;

use std::time::Duration;

use common::tmux::Tmux;
use common::*;

fn config_text(m: &str) -> String {
    let bin = bin();
    format!(
        "# operator comment: keep me
mcp:
  servers:
    - name: notes   # the notes server
      command: {bin}
      args: [demo-server]
      env: {{AIMON_TEST_MARKER: {m}}}
    - name: guard
      command: {bin}
      args: [demo-server]
      env: {{AIMON_TEST_MARKER: {m}}}
      annotation_trust: trust
hooks:
  # notes are never deleted
  - event: pre_tool_use
    match: {{tool: mcp__notes__delete_note}}
    action:
      mcp_tool: {{server: guard, tool: echo, arguments: {{text: '{{\"decision\":\"deny\",\"reason\":\"notes are kept\"}}'}}}}
policy:
  approval: ask_mutating   # the default, written out
"
    )
}

/// Opens the argument editor of the first tool matching `filter` (focus on Tools) and sends
/// the call as prefilled.
fn call_tool(t: &Tmux, filter: &str) {
    t.keys(&["3", "/"]);
    t.text(filter);
    t.keys(&["Enter", "Enter"]);
    t.wait_for("Ctrl-S send", Duration::from_secs(5));
    t.keys(&["C-s"]);
}

fn start_console(t: &Tmux, config: &std::path::Path, log: &std::path::Path) {
    t.text(&format!(
        "{} --config {} --log-file {}",
        bin(),
        config.display(),
        log.display()
    ));
    t.keys(&["Enter"]);
    t.wait_for("2/2 ready", Duration::from_secs(20));
}

#[test]
fn hooks_deny_and_always_allow_lasts_until_revoked() {
    let m = marker("tui-hooks");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("aimon.yaml");
    let original = config_text(&m);
    std::fs::write(&config, &original).unwrap();
    let log = dir.path().join("console.log");
    let t = Tmux::start(dir.path(), 140, 40);
    start_console(&t, &config, &log);

    // The hook denies delete_note, with its reason; nothing asked.
    call_tool(&t, "notes__delete");
    let screen = t.wait_for_row("#1", "denied");
    assert!(!screen.contains("Approval needed"), "{screen}");
    // Tools kept the keys; in Calls the call is the one selected.
    t.keys(&["4", "Enter"]);
    let screen = t.wait_for("notes are kept", Duration::from_secs(5));
    assert!(
        screen.contains("denied by hooks[0] (mcp_tool guard/echo): notes are kept"),
        "{screen}"
    );
    t.keys(&["Escape"]);
    // The Events pane has the hook's run.
    let screen = t.wait_for("pre_tool_use hooks[0", Duration::from_secs(5));
    assert!(screen.contains(" hook "), "{screen}");

    // write_note asks (mutating, destructive under ignore); A asks once more, y writes the rule.
    call_tool(&t, "notes__write");
    let screen = t.wait_for_question("Approval needed", Duration::from_secs(5));
    assert!(screen.contains("A always"), "{screen}");
    t.keys(&["A"]);
    t.wait_for("always allow it, in every session", Duration::from_secs(5));
    t.keys(&["y"]);
    t.wait_for_row("#2", "ok");
    t.wait_for("is always allowed now", Duration::from_secs(5));
    // The rule holds the pin of the definition approved (tests/pins.rs: what a change does).
    let written = std::fs::read_to_string(&config).unwrap();
    let (rule, pin) = written
        .split_once("      pin: sha256:")
        .unwrap_or_else(|| panic!("no pin written: {written}"));
    assert_eq!(
        rule,
        format!("{original}  rules:\n    - tool: mcp__notes__write_note\n      decision: allow\n")
    );
    assert_eq!(pin.trim_end().len(), 64, "{written}");

    // The next call runs without asking.
    call_tool(&t, "notes__write");
    let screen = t.wait_for_row("#3", "ok");
    assert!(!screen.contains("Approval needed"), "{screen}");

    // A new console loads the rule: still no question.
    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));
    t.keys(&["C-l"]);
    start_console(&t, &config, &log);
    call_tool(&t, "notes__write");
    let screen = t.wait_for_row("#1", "ok");
    assert!(!screen.contains("Approval needed"), "{screen}");

    // L lists it with where it came from; d asks, d again removes it from the file.
    t.keys(&["L"]);
    let screen = t.wait_for("Rules and session approvals", Duration::from_secs(5));
    let row = screen
        .lines()
        .find(|l| l.contains("tool mcp__notes__write_note"))
        .unwrap_or_default();
    assert!(
        row.contains("allow") && row.contains("policy.rules[0] in"),
        "{screen}"
    );
    t.keys(&["d"]);
    t.wait_for("d again removes policy.rules[0]", Duration::from_secs(5));
    t.keys(&["d"]);
    t.wait_for("removed policy.rules[0]", Duration::from_secs(5));
    let written = std::fs::read_to_string(&config).unwrap();
    assert_eq!(written, format!("{original}  rules: []\n"));
    let screen = t.wait_for("No rule and no session approval", Duration::from_secs(5));
    assert!(!screen.contains("tool mcp__notes__write_note"), "{screen}");
    t.keys(&["Escape"]);

    // It asks again.
    call_tool(&t, "notes__write");
    t.wait_for_question("Approval needed", Duration::from_secs(5));
    t.keys(&["n"]);
    t.wait_for_row("#2", "denied");

    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));
    assert!(
        wait_gone(&m, Duration::from_secs(3)).is_empty(),
        "servers left behind"
    );
}
