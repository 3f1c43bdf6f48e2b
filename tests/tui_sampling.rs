//! A server's sampling request in a real terminal: the real binary in tmux, server-everything
//! over stdio and the demo model as the agent's model (started by the console). Calling
//! `trigger-sampling-request` shows the sampling modal with what the server asks; `y` has the
//! demo model answer; the answer, edited, goes back on Ctrl-S and the server's result echoes
//! it; the Events pane says how it was answered. A second request is rejected with `n` and the
//! call fails with the server's error. In the Conversation's input, `@` attaches one of
//! server-everything's resources (its text reaches the model: the session transcript has it)
//! and `/` runs its `simple-prompt` (the message shown, the model answering).

mod common;
#[allow(dead_code)] // the Python peer is not used here
mod peers;

use std::time::Duration;

use common::tmux::Tmux;
use common::*;

fn config_text(m: &str) -> String {
    let everything = peers::npm().join("@modelcontextprotocol/server-everything/dist/index.js");
    format!(
        "mcp:
  servers:
    - name: everything
      command: node
      args: [{everything:?}, stdio]
      env: {{AIMON_TEST_MARKER: {m}}}
policy:
  approval: never
agent:
  command: {bin}
  args: [demo-model]
  model: demo
  request_timeout: 10s
",
        bin = bin(),
        everything = everything.display().to_string(),
    )
}

/// Calls trigger-sampling-request from the Tools pane with `prompt`. (The window is wide so
/// that the Events pane shows its lines whole.)
fn trigger(t: &Tmux, prompt: &str) {
    t.keys(&["3", "/"]);
    t.text("trigger-sampling-request");
    t.keys(&["Enter", "Enter"]);
    t.wait_for("Ctrl-S send", Duration::from_secs(5));
    // The prefilled arguments: maxTokens first, then prompt.
    t.keys(&["C-u"]);
    t.text("\"maxTokens\": 50,");
    t.keys(&["Down", "C-u"]);
    t.text(&format!("\"prompt\": {prompt:?}"));
    t.keys(&["C-s"]);
}

#[test]
fn a_sampling_request_is_answered_by_the_demo_model_after_approval() {
    let m = marker("tui-sampling");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("aimon.yaml");
    std::fs::write(&config, config_text(&m)).unwrap();
    let t = Tmux::start(dir.path(), 240, 40);
    t.text(&format!(
        "env XDG_STATE_HOME={} {} --config {} --log-file {}",
        dir.path().display(),
        bin(),
        config.display(),
        dir.path().join("log").display()
    ));
    t.keys(&["Enter"]);
    t.wait_for("1/1 ready", Duration::from_secs(30));
    t.wait_for("ready · http://127.0.0.1:", Duration::from_secs(20));
    // Out of the Conversation input, to the Tools pane.
    t.keys(&["Tab"]);

    trigger(&t, "what is 2 plus 3");
    let screen = t.wait_for(
        "everything asks for a model's message",
        Duration::from_secs(10),
    );
    assert!(
        screen.contains("You are a helpful test server."),
        "{screen}"
    );
    assert!(
        screen.contains("Resource trigger-sampling-request context: what is 2 plus 3"),
        "{screen}"
    );
    assert!(screen.contains("max tokens"), "{screen}");
    assert!(screen.contains("temperature 0.70"), "{screen}");
    // Nothing went to the server yet: the call still runs.
    assert!(!t.screen().contains("LLM sampling result"));
    t.keys(&["y"]);
    let screen = t.wait_for("answer of demo", Duration::from_secs(10));
    assert!(screen.contains("(demo model)"), "{screen}");
    // Edited before it goes: the server gets the edited text.
    t.text(" Checked by the operator.");
    t.wait_for("· edited", Duration::from_secs(5));
    t.keys(&["C-s"]);
    t.wait_for_row("#1", "ok");
    t.keys(&["4", "Enter"]);
    let screen = t.wait_for("LLM sampling result", Duration::from_secs(10));
    assert!(screen.contains("Checked by the operator."), "{screen}");
    assert!(screen.contains("\"model\": \"demo\""), "{screen}");
    t.keys(&["Escape"]);
    t.keys(&["5", "End"]);
    t.wait_for(
        "sampling/createMessage: answered (model demo, edited",
        Duration::from_secs(5),
    );

    // Rejected: the server gets an error, and the call says so.
    trigger(&t, "again");
    t.wait_for(
        "everything asks for a model's message",
        Duration::from_secs(10),
    );
    t.keys(&["n"]);
    t.wait_for_row("#2", "error");
    t.wait_for("rejected: rejected by the operator", Duration::from_secs(5));

    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));
    assert!(
        wait_gone(&m, Duration::from_secs(3)).is_empty(),
        "servers left behind"
    );
}

#[test]
fn at_attaches_a_resource_and_slash_runs_a_prompt_in_the_conversation() {
    let m = marker("tui-pick");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("aimon.yaml");
    std::fs::write(&config, config_text(&m)).unwrap();
    let t = Tmux::start(dir.path(), 140, 40);
    t.text(&format!(
        "env XDG_STATE_HOME={} {} --config {} --log-file {}",
        dir.path().display(),
        bin(),
        config.display(),
        dir.path().join("log").display()
    ));
    t.keys(&["Enter"]);
    t.wait_for("1/1 ready", Duration::from_secs(30));
    t.wait_for("ready · http://127.0.0.1:", Duration::from_secs(20));

    // @: the picker of resources, filtered; the one picked is attached.
    t.text("@");
    t.wait_for("Attach a resource (@)", Duration::from_secs(5));
    t.text("features");
    t.wait_for("@features.md", Duration::from_secs(5));
    t.keys(&["Enter"]);
    t.wait_for("attached @features.md", Duration::from_secs(5));
    t.text("what does it say");
    t.keys(&["Enter"]);
    t.wait_for(
        "@features.md (everything) attached: text/markdown",
        Duration::from_secs(10),
    );
    t.wait_for("(demo model)", Duration::from_secs(10));
    // The model was sent the resource's text with the prompt.
    let sessions = dir.path().join("aimon-console/sessions");
    let transcript: String = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(
        transcript.contains("what does it say\\n\\n<resource server=\\\"everything\\\" uri=\\\"demo://resource/static/document/features.md\\\">"),
        "{transcript}"
    );

    // /: the picker of prompts; simple-prompt has no arguments, so it goes at once.
    t.text("/");
    t.wait_for("Run a server prompt (/)", Duration::from_secs(5));
    t.text("simple");
    t.keys(&["Enter"]);
    t.wait_for(
        "/simple-prompt (everything): 1 message added",
        Duration::from_secs(10),
    );
    t.wait_for(
        "This is a simple prompt without arguments.",
        Duration::from_secs(5),
    );
    t.keys(&["C-c"]);
    t.wait_for("READY$", Duration::from_secs(10));
    assert!(
        wait_gone(&m, Duration::from_secs(3)).is_empty(),
        "servers left behind"
    );
}
