//! A server's sampling request in a real terminal: the real binary in tmux, server-everything
//! over stdio and the demo model as the agent's model (started by the console). Calling
//! `trigger-sampling-request` shows the sampling modal with what the server asks; `y` has the
//! demo model answer; the answer, edited, goes back on Ctrl-S and the server's result echoes
//! it; the Events pane says how it was answered. A second request is rejected with `n` and the
//! call fails with the server's error. In the Conversation's input, `@` attaches one of
//! server-everything's resources (its text reaches the model: the session transcript has it)
//! and `/` runs its `simple-prompt` (the message shown, the model answering).

mod common;
mod peers;

use std::time::Duration;

use common::tmux::Tmux;
use common::*;

fn config_text(m: &str) -> String {
    peers::everything_with_demo_model(m, bin())
}

/// Starts the console on `config` in `t`, its state and log under `dir`.
fn open_console(t: &Tmux, dir: &std::path::Path, config: &std::path::Path) {
    t.text(&format!(
        "env XDG_STATE_HOME={} {} --config {} --log-file {}",
        dir.display(),
        bin(),
        config.display(),
        dir.join("log").display()
    ));
    t.keys(&["Enter"]);
}

/// Calls trigger-sampling-request from the Tools pane with `prompt`. (The window is wide so
/// that the Events pane shows its lines whole.)
fn trigger(t: &Tmux, prompt: &str) {
    t.keys(&["3", "/"]);
    t.text("trigger-sampling-request");
    t.keys(&["Enter", "Enter"]);
    t.wait_for("Ctrl-S send", Duration::from_secs(5));
    // The form: the required prompt first, then maxTokens.
    t.keys(&["C-u"]);
    t.text(prompt);
    t.keys(&["Down", "C-u"]);
    t.text("50");
    t.keys(&["C-s"]);
}

#[test]
fn a_sampling_request_is_answered_by_the_demo_model_after_approval() {
    let m = marker("tui-sampling");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("aimon.yaml");
    std::fs::write(&config, config_text(&m)).unwrap();
    let t = Tmux::start(dir.path(), 240, 40);
    open_console(&t, dir.path(), &config);
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
    open_console(&t, dir.path(), &config);
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

/// `config.example.yaml` with server-everything added and the demo model scripted: its first
/// answer is text, its second calls `trigger-sampling-request`; every answer waits 3 s before
/// its first word (time to open a picker while the agent works).
fn example_with_everything(m: &str, dir: &std::path::Path) -> std::path::PathBuf {
    let everything = peers::npm().join("@modelcontextprotocol/server-everything/dist/index.js");
    let script = dir.join("script.json");
    std::fs::write(
        &script,
        r#"[{"text": "Ready when you are."},
            {"text": "Asking the server to sample.",
             "tool_calls": [{"name": "trigger-sampling-request",
                             "arguments": {"prompt": "say hi", "maxTokens": 20}}]}]"#,
    )
    .unwrap();
    let example = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.yaml"),
    )
    .unwrap();
    let entry = format!(
        "  servers:\n    - name: everything\n      command: node\n      args: [{:?}, stdio]\n      env: {{AIMON_TEST_MARKER: {m}}}\n\n",
        everything.display().to_string()
    );
    let demo = "args: [demo-model, --prefer-server, notes-trusted]";
    assert!(
        example.contains(demo),
        "config.example.yaml's demo model changed"
    );
    let config = example.replacen("  servers:\n", &entry, 1).replacen(
        demo,
        &format!(
            "args: [demo-model, --prefer-server, notes-trusted, --script, {:?}, --tokens-per-sec, \"50\", --chunk-delay-ms, \"3000\"]",
            script.display().to_string()
        ),
        1,
    );
    let path = dir.join("aimon.yaml");
    std::fs::write(&path, config).unwrap();
    path
}

/// The overlay stack in a real terminal, on the example config: Alt-3 shows Tools from the
/// Conversation's input; with the `@` picker open, the agent's call asks for approval and then
/// server-everything's sampling request arrives: each shows on top of the picker and takes its
/// keys (`y`), and once answered the picker is back with what was typed in it.
#[test]
fn requests_arriving_over_the_at_picker_go_on_top_and_the_picker_comes_back() {
    let m = marker("tui-overlays");
    let dir = tempfile::tempdir().unwrap();
    let config = example_with_everything(&m, dir.path());
    let t = Tmux::start(dir.path(), 140, 40);
    open_console(&t, dir.path(), &config);
    t.wait_for("ready · http://127.0.0.1:", Duration::from_secs(30));
    t.wait_for("7/7 ready", Duration::from_secs(30));

    // From the Conversation's input, Alt-3 shows Tools and Alt-8 comes back.
    t.keys(&["M-3"]);
    t.wait_for("mcp__everything__echo", Duration::from_secs(5));
    t.keys(&["M-8"]);
    t.wait_for("Tab/Alt-1-8 pane", Duration::from_secs(5));

    t.text("hello");
    t.keys(&["Enter"]);
    t.wait_for("Ready when you are.", Duration::from_secs(15));
    t.text("go");
    t.keys(&["Enter"]);
    // While the model thinks, the `@` picker, filtered.
    t.text("@");
    t.wait_for("Attach a resource (@)", Duration::from_secs(5));
    t.text("feat");
    t.wait_for("@features.md", Duration::from_secs(5));

    // The call asks: the approval is drawn over the picker and its keys are the footer's.
    let screen = t.wait_for("Approval needed", Duration::from_secs(15));
    assert!(!screen.contains("Attach a resource (@)"), "{screen}");
    assert!(screen.contains("y allow once"), "{screen}");
    // Keys typed just before a question are not taken as its answer: a pause first.
    std::thread::sleep(Duration::from_millis(1500));
    t.keys(&["y"]);

    // Then the server's sampling request, over the picker too; `y` reaches it.
    let screen = t.wait_for(
        "everything asks for a model's message",
        Duration::from_secs(15),
    );
    assert!(!screen.contains("Attach a resource (@)"), "{screen}");
    assert!(screen.contains("y/Enter ask the model"), "{screen}");
    std::thread::sleep(Duration::from_millis(1500));
    t.keys(&["y"]);
    t.wait_for("answer of demo", Duration::from_secs(15));
    t.keys(&["C-s"]);

    // Answered: the picker is back with its filter.
    let screen = t.wait_for("Attach a resource (@)", Duration::from_secs(10));
    assert!(screen.contains("@feat"), "{screen}");
    assert!(screen.contains("@features.md"), "{screen}");
    t.wait_for("(demo model)", Duration::from_secs(15));

    // Esc keeps what was typed in the picker as text in the input.
    t.keys(&["Escape"]);
    t.wait_for("› @feat", Duration::from_secs(5));
    t.keys(&["C-c"]);
    t.wait_for("Quit?", Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["y"]);
    t.wait_for("READY$", Duration::from_secs(10));
    assert!(
        wait_gone(&m, Duration::from_secs(3)).is_empty(),
        "servers left behind"
    );
}
