//! The agent in the console, end to end: the real binary in tmux on `config.example.yaml` (its
//! demo model started by the console). A save goes through the approval modal, which names
//! the agent, MUTATING and why; `y` runs it and the answer streams in; an add runs with no
//! modal. Esc while the model streams ends the turn at once; Esc while a call runs cancels the
//! call; the next prompt works. With `stream: false` the model's words (before its calls, and
//! the answer) are shown all the same, once. Quitting during a call records it cancelled.
//! `--resume` continues a session with the profile it last used, as `run` does.
//! Nothing is left running after quit.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::tmux::Tmux;
use common::*;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.yaml")
}

/// The text of the one transcript the console wrote under `state`.
fn transcript(state: &Path) -> String {
    let sessions = state.join("aimon-console").join("sessions");
    let files: Vec<_> = std::fs::read_dir(&sessions)
        .expect("a sessions folder")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0]).expect("the transcript reads")
}

/// Every process below `pid` (children, their children, …).
fn descendants(pid: i32) -> Vec<i32> {
    let mut parents = vec![pid];
    let mut found = Vec::new();
    while let Some(parent) = parents.pop() {
        let children = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
            found.push(child);
            parents.push(child);
        }
    }
    found
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

/// Starts the console on `config` in a 140×40 tmux window, its transcripts under `state`, and
/// waits for every server and the agent.
fn console(dir: &Path, config: &Path, state: &Path) -> Tmux {
    console_with(dir, config, state, "")
}

/// `console`, with more words on its command line.
fn console_with(dir: &Path, config: &Path, state: &Path, more: &str) -> Tmux {
    let t = Tmux::start(dir, 140, 40);
    t.text(&format!(
        "env XDG_STATE_HOME={} {} --config {} --log-file {} {more}",
        state.display(),
        bin(),
        config.display(),
        dir.join("console.log").display()
    ));
    t.keys(&["Enter"]);
    t.wait_for("6/6 ready", Duration::from_secs(30));
    t.wait_for("ready · http://127.0.0.1:", Duration::from_secs(20));
    t
}

/// Types a prompt into the Conversation pane and sends it.
fn ask(t: &Tmux, prompt: &str) {
    t.text(prompt);
    t.keys(&["Enter"]);
}

/// Quits with Ctrl-C and checks that the console and everything it started are gone.
fn quit(t: &Tmux) {
    let pid = t.console_pid();
    let started = descendants(pid);
    assert!(started.len() >= 7, "servers and the model: {started:?}");
    t.keys(&["C-c"]);
    t.wait_for("READY$", Duration::from_secs(10));
    let deadline = Instant::now() + Duration::from_secs(5);
    while started.iter().any(|p| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<i32> = started.into_iter().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "left running after quit: {left:?}");
    assert_eq!(t.display("#{alternate_on}"), "0");
}

#[test]
fn the_agent_asks_for_approval_and_answers_in_the_console() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let t = console(dir.path(), &example(), &state);

    // The Conversation pane has focus: typing goes to its input. An idle console draws no
    // frames: the turn's clock starts when the key is pressed, not at the last frame.
    // (The prompt and its Enter arrive in one read, as a paste or a fast typist's would.)
    std::thread::sleep(Duration::from_secs(3));
    t.text("save a note called demo saying hello\r");
    let screen = t.wait_for_question("Approval needed", Duration::from_secs(10));
    let status = screen
        .lines()
        .find(|l| l.contains("model turn 1 · ") && l.contains("waiting for your approval"))
        .unwrap_or_default();
    let elapsed = status.split(" · ").nth(1).unwrap_or_default().to_string();
    assert!(
        elapsed.ends_with("ms")
            || (!elapsed.contains('m')
                && elapsed
                    .trim_end_matches('s')
                    .parse::<f64>()
                    .is_ok_and(|s| s < 3.0)),
        "the turn started long before it was asked for: {status:?}\n{screen}"
    );
    assert!(
        screen.contains("mcp__notes-trusted__write_note"),
        "{screen}"
    );
    assert!(
        screen.contains("asked   by the agent, in model turn 1"),
        "{screen}"
    );
    assert!(
        screen.contains("reason  “(demo model) I will save the note \"demo\".”"),
        "{screen}"
    );
    // MUTATING and why (the why wraps in the modal's width).
    assert!(
        screen.contains("write_note is MUTATING because readOnlyHint=false,"),
        "{screen}"
    );
    assert!(
        screen.contains("destructiveHint=false, trusted; policy.approval is ask_mutating"),
        "{screen}"
    );
    t.keys(&["y"]);
    // Ok in Calls, on its line in the conversation, and the answer streamed in.
    t.wait_for_row("#1 ", "ok");
    let screen = t.wait_for(
        "(demo model) Done: saved note \"demo\".",
        Duration::from_secs(10),
    );
    let line = screen
        .lines()
        .find(|l| l.contains("→ #1"))
        .unwrap_or_default();
    assert!(
        line.contains("✓ ok") && line.contains("(allowed once by you after "),
        "{screen}"
    );
    assert!(
        screen.contains("turn 2 ·"),
        "latency and tokens per turn: {screen}"
    );
    assert!(screen.contains(" in + "), "{screen}");

    // A read-only call runs with no modal.
    ask(&t, "what is 2 plus 3");
    let start = Instant::now();
    loop {
        let screen = t.screen();
        assert!(!screen.contains("Approval needed"), "{screen}");
        if screen.contains("(demo model) 2 plus 3 is 5.") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no answer: {screen}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let screen = t.wait_for_row("#2 ", "ok");
    assert!(screen.contains("mcp__notes-trusted__add"), "{screen}");

    // The transcript holds the call and how it was approved.
    let text = transcript(&state);
    assert!(
        text.contains(r#""type":"approval","call_id":"call_demo_0","runtime_id":1,"decision":"allow_once","by":"operator""#),
        "{text}"
    );
    quit(&t);
}

/// `A` on the agent's call: its line says always; the next call of the tool runs without a
/// question and its line names the rule that let it through (on a copy of the example: `A`
/// writes the rule into it). The Calls pane's view of each call and the transcript say the same.
#[test]
fn always_allowing_is_said_and_the_next_call_names_its_rule() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let config = dir.path().join("aimon.yaml");
    std::fs::copy(example(), &config).unwrap();
    let t = console(dir.path(), &config, &state);
    ask(&t, "save a note called a1 saying hi");
    t.wait_for_question("Approval needed", Duration::from_secs(10));
    t.keys(&["A"]);
    t.wait_for_row("#1 ", "ok");
    t.wait_for("is always allowed now", Duration::from_secs(10));
    let screen = t.wait_for(
        "(demo model) Done: saved note \"a1\".",
        Duration::from_secs(10),
    );
    let line = |screen: &str, id: &str| {
        screen
            .lines()
            .find(|l| l.contains(&format!("→ {id} ")))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line(&screen, "#1").contains("(always allowed by you after "),
        "{screen}"
    );
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(
        written.contains("tool: mcp__notes-trusted__write_note"),
        "{written}"
    );

    ask(&t, "save a note called a2 saying hi");
    let screen = t.wait_for(
        "(demo model) Done: saved note \"a2\".",
        Duration::from_secs(10),
    );
    assert!(!screen.contains("Approval needed"), "{screen}");
    assert!(
        line(&screen, "#2").contains("(allowed by policy.rules[1] (tool mcp__notes-trusted__wri"),
        "{screen}"
    );
    // The Calls pane's view of the call says it too, and so does the transcript.
    t.keys(&["Escape", "4", "Enter"]);
    let view = t.wait_for("gate: always allowed by you", Duration::from_secs(10));
    assert!(view.contains("Call #1 "), "{view}");
    t.keys(&["Escape"]);
    t.wait_for("┌ Calls", Duration::from_secs(5));
    t.keys(&["Down"]);
    t.keys(&["Enter"]);
    let view = t.wait_for("gate: allowed by policy.rules[1]", Duration::from_secs(10));
    assert!(view.contains("Call #2 "), "{view}");
    t.keys(&["Escape"]);
    let text = transcript(&state);
    assert!(
        text.contains(r#""type":"approval","call_id":"call_demo_0","runtime_id":1,"decision":"allow_always","by":"operator""#),
        "{text}"
    );
    assert!(
        text.contains(r#""type":"allowed","call_id":"call_demo_1","runtime_id":2,"why":"allowed by policy.rules[1]"#),
        "{text}"
    );
    quit(&t);
}

/// `R` while the agent's call runs: the turn ends at the cancel, with no further request to
/// the model (its answer to a turn without tools would show), and the lines before the
/// restart keep their number and time.
#[test]
fn a_restart_during_a_turn_ends_it_without_asking_the_model_again() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let t = console(dir.path(), &example(), &state);
    ask(&t, "what is 2 plus 3");
    t.wait_for("(demo model) 2 plus 3 is 5.", Duration::from_secs(10));
    t.wait_for_row("#1 ", "ok");
    ask(&t, "wait 8 seconds");
    t.wait_for_row("#2 ", "running");
    t.keys(&["Tab", "R"]);
    t.wait_for_question(
        "still running: restart every server",
        Duration::from_secs(5),
    );
    t.keys(&["y"]);
    t.wait_for("agent ready:", Duration::from_secs(30));
    // Time for a request the old code made after the cancel, and its answer.
    std::thread::sleep(Duration::from_secs(2));
    let screen = t.screen();
    assert!(!screen.contains("none is on offer"), "{screen}");
    assert!(!screen.contains("Done waiting"), "{screen}");
    let first = screen
        .lines()
        .find(|l| l.contains("mcp__notes-trusted__add"))
        .unwrap_or_default();
    assert!(first.contains("→ #1 ✓ ok "), "{screen}");
    assert!(first.contains("ms"), "its time: {screen}");
    quit(&t);
}

#[test]
fn esc_ends_a_streaming_turn_and_cancels_a_running_call() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // The example, its model answering what no rule covers with a long, slow stream.
    let text = std::fs::read_to_string(example()).unwrap();
    let slow = text.replace(
        "args: [demo-model, --prefer-server, notes-trusted]",
        "args: [demo-model, --prefer-server, notes-trusted, --long-answer, \"5000\", --tokens-per-sec, \"100\"]",
    );
    assert_ne!(slow, text, "the example's model line changed");
    let config = dir.path().join("slow.yaml");
    std::fs::write(&config, slow).unwrap();
    let t = console(dir.path(), &config, &state);

    // Esc while the model streams: the turn ends at once.
    ask(&t, "tell me a long story");
    t.wait_for("a long answer from the demo model", Duration::from_secs(10));
    t.wait_for("model turn 1 ·", Duration::from_secs(5));
    let pressed = Instant::now();
    let sent = t
        .cmd()
        .args(["send-keys", "-t", "main", "Escape"])
        .status()
        .expect("send-keys");
    assert!(sent.success());
    let screen = loop {
        let screen = t.screen();
        if screen.contains("cancelled by the operator") {
            break screen;
        }
        assert!(
            pressed.elapsed() < Duration::from_secs(10),
            "Esc did not end the turn: {screen}"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    let seen = pressed.elapsed();
    let inside = screen
        .lines()
        .find_map(|l| {
            let at = l.find("the turn ended ")?;
            Some(l[at + 15..].split(" after Esc").next()?.to_string())
        })
        .unwrap_or_default();
    println!(
        "Esc while streaming: the turn ended {inside} after Esc (the console's own clock); on the screen {} ms after tmux was asked to send the key",
        seen.as_millis()
    );
    assert!(!inside.is_empty(), "{screen}");
    assert!(seen < Duration::from_secs(5), "{screen}");
    assert!(
        screen.contains("ready · http"),
        "the turn is over: {screen}"
    );

    // Esc while a call runs: the call is cancelled (its server sent notifications/cancelled).
    ask(&t, "wait 30 seconds");
    t.wait_for_row("#1 ", "running");
    t.keys(&["Escape"]);
    let screen = t.wait_for_row("#1 ", "cancelled");
    assert!(screen.contains("mcp__notes-trusted__slow"), "{screen}");
    t.wait_for("ready · http", Duration::from_secs(5));

    // The next prompt works.
    ask(&t, "what is 2 plus 3");
    t.wait_for("(demo model) 2 plus 3 is 5.", Duration::from_secs(10));
    t.wait_for_row("#2 ", "ok");
    // The turn's end reaches the console a moment after its answer: Ctrl-C before that asks
    // first (the agent is at work), as it should.
    t.wait_for("ready · http", Duration::from_secs(5));
    quit(&t);
}

#[test]
fn a_reply_that_was_not_streamed_is_shown_once() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // The example, its model's profile with `stream: false` (as llama.cpp's server needs).
    let text = std::fs::read_to_string(example()).unwrap();
    let profile = "      model: demo\n      request_timeout: 10s\n";
    assert_eq!(
        text.matches(profile).count(),
        1,
        "the example's profile changed"
    );
    let config = dir.path().join("not-streamed.yaml");
    std::fs::write(
        &config,
        text.replace(profile, &format!("{profile}      stream: false\n")),
    )
    .unwrap();
    let t = console(dir.path(), &config, &state);

    ask(&t, "what is 2 plus 3");
    t.wait_for_row("#1 ", "ok");
    let screen = t.wait_for("(demo model) 2 plus 3 is 5.", Duration::from_secs(10));
    for said in [
        "(demo model) I will add 2 and 3.",
        "(demo model) 2 plus 3 is 5.",
    ] {
        assert_eq!(screen.matches(said).count(), 1, "{said}: {screen}");
    }
    let before = screen.find("I will add 2 and 3.").unwrap_or(usize::MAX);
    let call = screen.find("→ #1").unwrap_or(0);
    assert!(
        before < call,
        "the words before the call come first: {screen}"
    );
    quit(&t);
}

/// Quitting while the agent's call runs (`q`, then `y` to "quit and cancel it?") ends the call
/// and the prompt as cancelled, in the transcript too: not as an error from the servers going
/// away, and the model is not asked again.
#[test]
fn quitting_during_a_call_records_it_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let t = console(dir.path(), &example(), &state);
    ask(&t, "wait 30 seconds");
    t.wait_for_row("#1 ", "running");
    t.keys(&["Tab"]);
    t.keys(&["q"]);
    t.wait_for("still running: quit and cancel it?", Duration::from_secs(5));
    t.keys(&["y"]);
    t.wait_for("READY$", Duration::from_secs(15));
    let records: Vec<serde_json::Value> = transcript(&state)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let of = |kind: &str| -> Vec<&serde_json::Value> {
        records.iter().filter(|r| r["type"] == kind).collect()
    };
    let results = of("tool_result");
    assert_eq!(results.len(), 1, "{records:#?}");
    assert_eq!(results[0]["status"], "cancelled", "{records:#?}");
    assert_eq!(
        of("assistant").len(),
        1,
        "the model was asked again: {records:#?}"
    );
    let stopped = of("stopped");
    assert_eq!(stopped.len(), 1, "{records:#?}");
    assert_eq!(stopped[0]["reason"], "cancelled", "{records:#?}");
}

/// `--resume ID` with no `--model` continues with the profile the session used (as `run`
/// does), says so, and shows the session's conversation.
#[test]
fn resume_continues_with_the_sessions_profile() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // The example with a second profile, `other`, like `demo` but for its model name.
    let text = std::fs::read_to_string(example()).unwrap();
    let profile = "      model: demo\n      request_timeout: 10s\n";
    assert_eq!(
        text.matches(profile).count(),
        1,
        "the example's profile changed"
    );
    let other = "    other:\n      command: ${AIMON_CONSOLE}\n      args: [demo-model, --prefer-server, notes-trusted]\n      model: other-demo\n";
    let config = dir.path().join("two-profiles.yaml");
    std::fs::write(&config, text.replace(profile, &format!("{profile}{other}"))).unwrap();
    let first = std::process::Command::new(bin())
        .args(["--config", &config.to_string_lossy(), "--log-file"])
        .arg(dir.path().join("run.log"))
        .args(["run", "what is 2 plus 3", "--model", "other", "--json"])
        .env("XDG_STATE_HOME", &state)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let session: serde_json::Value = serde_json::from_str(
        String::from_utf8_lossy(&first.stdout)
            .lines()
            .next()
            .expect("a first line"),
    )
    .expect("JSON");
    let id = session["id"].as_str().expect("a session id").to_string();

    let t = console_with(dir.path(), &config, &state, &format!("--resume {id}"));
    // The note wraps in the pane: its two halves.
    let screen = t.wait_for("other-demo; the session's)", Duration::from_secs(10));
    assert!(
        screen.contains(&format!(
            "resumed session {id} (1 prompt); agent ready: other (model"
        )),
        "{screen}"
    );
    assert!(
        screen.contains("Conversation · other (model other-demo)"),
        "{screen}"
    );
    assert!(screen.contains("what is 2 plus 3"), "{screen}");
    quit(&t);
}

/// Typing on after a prompt is sent: the approval that pops up meanwhile takes none of the
/// typed `y`s as its answer (it says why); after a pause, `y` answers it.
#[test]
fn keys_typed_on_after_a_prompt_do_not_answer_its_approval() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let t = console(dir.path(), &example(), &state);
    ask(&t, "save a note called typed saying yes");
    // The operator types on, a `y` every 150 ms, while the question comes up.
    for _ in 0..12 {
        t.text("y");
    }
    let screen = t.wait_for("Approval needed", Duration::from_secs(5));
    assert!(
        screen.contains("you were typing when this question came"),
        "{screen}"
    );
    assert!(!screen.contains("✓ ok"), "a typed y answered it: {screen}");
    std::thread::sleep(Duration::from_secs(1));
    t.keys(&["y"]);
    t.wait_for_row("#1 ", "ok");
    quit(&t);
}

/// `kill` (SIGTERM) or a closed terminal (SIGHUP) quits as `q` does: the servers and the model
/// endpoint the console started are stopped, and the terminal is left as it was.
#[test]
fn sigterm_and_sighup_quit_and_stop_everything_started() {
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let t = console(dir.path(), &example(), &state);
        let pid = t.console_pid();
        let started = descendants(pid);
        assert!(started.len() >= 7, "servers and the model: {started:?}");
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(pid, signal);
        }
        t.wait_for("READY$", Duration::from_secs(15));
        let deadline = Instant::now() + Duration::from_secs(5);
        while started.iter().any(|p| alive(*p)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let left: Vec<i32> = started.into_iter().filter(|p| alive(*p)).collect();
        assert!(left.is_empty(), "signal {signal}: left running: {left:?}");
        assert_eq!(t.display("#{alternate_on}"), "0", "signal {signal}");
    }
}

/// The Conversation's title carries the context meter after a turn; `/` lists its own commands
/// first: `/usage` tells what the next request carries, `/compact` summarises the conversation
/// (said on screen, marked in the transcript).
#[test]
fn the_meter_and_the_conversations_own_commands() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let t = console(dir.path(), &example(), &state);
    ask(&t, "what is 2 plus 3");
    t.wait_for("(demo model) 2 plus 3 is 5.", Duration::from_secs(10));
    t.wait_for(" · context ", Duration::from_secs(5));
    t.text("/");
    t.wait_for("the Conversation's own", Duration::from_secs(5));
    t.text("usage");
    t.keys(&["Enter"]);
    let screen = t.wait_for(
        "usage (estimated tokens): system prompt ~",
        Duration::from_secs(10),
    );
    assert!(screen.contains("notes-trusted ~"), "{screen}");
    t.text("/");
    t.wait_for("the Conversation's own", Duration::from_secs(5));
    t.text("compact");
    t.keys(&["Enter"]);
    t.wait_for("context compacted:", Duration::from_secs(10));
    quit(&t);
    assert!(transcript(&state).contains("\"type\":\"compacted\""));
}
