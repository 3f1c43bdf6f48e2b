//! The Resources and Prompts panes and servers' questions end to end in a real terminal: the
//! real binary in tmux against server-everything and a hostile demo server. A resource read,
//! a prompt's messages and a server's instructions shown; `trigger-elicitation-request`
//! answered through the form (the server's result echoes what was typed);
//! `trigger-url-elicitation` showing its URL; and nothing the hostile server sends (its
//! instructions, resource text, prompt messages, question) reaching the terminal. A 2026-07-28
//! server's question asked inside a call's result (`input_required`) goes through the same form.

mod common;
mod peers;

use std::time::Duration;

use common::tmux::Tmux;
use common::*;

fn config_text(m: &str) -> String {
    format!(
        "mcp:
  servers:
    - name: evil
      command: {bin}
      args: [demo-server, --evil, --live-tools, --legacy]
      env: {{AIMON_TEST_MARKER: {m}}}
      annotation_trust: trust
{everything}policy:
  approval: never
",
        bin = bin(),
        everything = peers::everything_server(m),
    )
}

/// Calls `tool` from the Tools pane, its prefilled raw JSON argument lines replaced by `lines`
/// (from the first value on).
fn send_call(t: &Tmux, tool: &str, lines: &[&str]) {
    t.keys(&["3", "/"]);
    t.text(tool);
    t.keys(&["Enter", "Enter"]);
    t.wait_for("Ctrl-S send", Duration::from_secs(5));
    if !lines.is_empty() {
        // The lines are the raw JSON's: Ctrl-R leaves the form for it.
        t.keys(&["C-r"]);
        t.wait_for("raw JSON", Duration::from_secs(5));
    }
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            t.keys(&["Down"]);
        }
        t.keys(&["C-u"]);
        t.text(line);
    }
    t.keys(&["C-s"]);
}

#[test]
fn resources_prompts_and_questions_in_the_console() {
    let m = marker("tui-content");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("aimon.yaml");
    std::fs::write(&config, config_text(&m)).unwrap();
    let t = Tmux::start(dir.path(), 140, 40);
    t.text(&format!(
        "{} --config {} --log-file {}",
        bin(),
        config.display(),
        dir.path().join("log").display()
    ));
    t.keys(&["Enter"]);
    t.wait_for("2/2 ready", Duration::from_secs(30));

    // The hostile server's instructions, resource, prompt and question: shown, harmless.
    t.keys(&["i"]);
    t.wait_for("evil · instructions", Duration::from_secs(5));
    t.keys(&["Escape"]);
    t.keys(&["6"]);
    t.wait_for("demo://readme", Duration::from_secs(10));
    t.keys(&["Enter"]);
    let screen = t.wait_for("# aimon demo server", Duration::from_secs(10));
    assert!(screen.contains("evil · README"), "{screen}");
    t.keys(&["Escape"]);
    t.keys(&["7"]);
    t.wait_for("hello", Duration::from_secs(10));
    t.keys(&["Down", "Enter"]);
    t.wait_for("Say hello to the operator.", Duration::from_secs(10));
    t.keys(&["Escape"]);
    send_call(&t, "evil__ask", &[]);
    // Escapes in its description flag the tool: though read-only and trusted, it asks first.
    t.wait_for_question(
        "flagged: description: terminal escape sequences",
        Duration::from_secs(10),
    );
    t.keys(&["y"]);
    t.wait_for("evil asks for input", Duration::from_secs(10));
    t.wait_for("Details of the note to write:", Duration::from_secs(5));
    t.keys(&["Escape"]);
    t.wait_for_row("#1", "ok");

    // A resource of server-everything, read.
    t.keys(&["6"]);
    for _ in 0..5 {
        t.keys(&["Down"]);
    }
    t.keys(&["Enter"]);
    let screen = t.wait_for("lines 1–", Duration::from_secs(10));
    assert!(screen.contains("everything · "), "{screen}");
    t.keys(&["Escape"]);

    // The form of trigger-elicitation-request: the required name first; what is typed
    // reaches the server, whose result echoes it.
    send_call(&t, "everything__trigger-elicitation-req", &[]);
    let screen = t.wait_for("everything asks for input", Duration::from_secs(10));
    assert!(screen.contains("Please provide inputs"), "{screen}");
    // A bad email is refused before anything goes back.
    t.text("Ada Lovelace");
    t.keys(&["Down", "Down", "Down"]);
    let screen = t.screen();
    assert!(screen.contains("▶ String with email"), "{screen}");
    t.text("ada@");
    t.keys(&["C-s"]);
    t.wait_for("not a valid email", Duration::from_secs(5));
    t.text("example.org");
    t.keys(&["C-s"]);
    t.wait_for_row("#2", "ok");
    t.keys(&["4", "End"]);
    for _ in 0..3 {
        t.keys(&["Down"]);
    }
    t.keys(&["Enter"]);
    let screen = t.wait_for(
        "User provided the requested information",
        Duration::from_secs(10),
    );
    assert!(screen.contains("- Name: Ada Lovelace"), "{screen}");
    assert!(screen.contains("- Email: ada@example.org"), "{screen}");
    t.keys(&["Escape"]);

    // trigger-url-elicitation: the URL and what it is for are shown; d declines.
    send_call(
        &t,
        "everything__trigger-url",
        &[
            "\"errorPath\": false,",
            "\"message\": \"Sign in to the archive\",",
            "\"url\": \"https://example.org/aimon-login\"",
        ],
    );
    let screen = t.wait_for("asks you to open a URL", Duration::from_secs(10));
    assert!(
        screen.contains("https://example.org/aimon-login"),
        "{screen}"
    );
    assert!(screen.contains("Sign in to the archive"), "{screen}");
    t.keys(&["d"]);
    t.wait_for_row("#3", "ok");

    // Nothing the hostile server sent reached the terminal.
    assert_eq!(t.display("#{pane_title}"), "original-title");
    assert!(!t.screen().contains("pwned"));
    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));
    assert_eq!(t.display("#{pane_title}"), "original-title");
    assert!(
        wait_gone(&m, Duration::from_secs(3)).is_empty(),
        "servers left behind"
    );
}

#[test]
fn a_question_inside_a_calls_result_is_answered_through_the_form() {
    // The demo server on 2026-07-28 (no --legacy) asks inside `ask`'s result (SEP-2322): the
    // console shows the form, and the call goes again with the answer and completes.
    let m = marker("tui-mrtr");
    let servers = demo_server("ask", &["--live-tools"], "annotation_trust: trust", &m);
    let (t, _dir) = console_on(&servers, "policy:\n  approval: never\n", "1/1 ready");
    // On this revision `ask` has no request of its own to send: only its result can ask.
    t.wait_for("protocol 2026-07-28", Duration::from_secs(5));
    send_call(&t, "ask__ask", &[]);
    t.wait_for("ask asks for input", Duration::from_secs(10));
    t.wait_for("Details of the note to write:", Duration::from_secs(5));
    t.text("groceries");
    t.keys(&["C-s"]);
    t.wait_for_row("#1", "ok");
    t.keys(&["4", "End", "Enter"]);
    let screen = t.wait_for("accepted:", Duration::from_secs(10));
    assert!(screen.contains("\"title\":\"groceries\""), "{screen}");
    assert!(screen.contains("\"copies\":3"), "{screen}");
    close_and_quit(&t, &m);
}

#[test]
fn skills_are_listed_beside_resources_and_loaded_only_as_listed() {
    // A server's skills are rows of the Resources pane; Enter loads one into the viewer when
    // its SKILL.md is the one listed, and shows why not when it is not.
    let m = marker("tui-skills");
    let servers = demo_server("notes", &["--skills"], "", &m)
        + &demo_server("bad", &["--tampered-skill"], "", &m);
    let (t, _dir) = console_on(&servers, "", "2/2 ready");
    t.keys(&["6"]);
    t.wait_for("+ 2 skills", Duration::from_secs(10));
    // The last of the eight rows (each server's readme, logo, template and skill): bad's
    // skill, refused.
    for _ in 0..7 {
        t.keys(&["Down"]);
    }
    t.wait_for("skill: Enter loads it", Duration::from_secs(5));
    t.keys(&["Enter"]);
    let screen = t.wait_for("refused", Duration::from_secs(10));
    assert!(screen.contains("digest"), "{screen}");
    assert!(!screen.contains("# Note taking"), "{screen}");
    t.keys(&["Escape"]);
    // Four rows up (bad's readme, logo, template and skill): notes' skill, loaded.
    for _ in 0..4 {
        t.keys(&["Up"]);
    }
    t.keys(&["Enter"]);
    let screen = t.wait_for("# Note taking", Duration::from_secs(10));
    assert!(screen.contains("notes · skill note-taking"), "{screen}");
    close_and_quit(&t, &m);
}

/// The console on a config of `servers` (entries under `mcp.servers`) and `rest`, once the
/// Servers title says `ready`; the folder holding the config goes with it.
fn console_on(servers: &str, rest: &str, ready: &str) -> (Tmux, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("aimon.yaml");
    std::fs::write(&config, format!("mcp:\n  servers:\n{servers}{rest}")).unwrap();
    (Tmux::console(dir.path(), &config, "", "", ready), dir)
}

/// Closes the view on top and quits; the servers marked `m` are gone after.
fn close_and_quit(t: &Tmux, m: &str) {
    // Apart: an Escape followed at once by `q` reads as Alt-q.
    t.keys(&["Escape"]);
    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));
    assert!(
        wait_gone(m, Duration::from_secs(3)).is_empty(),
        "servers left behind"
    );
}
