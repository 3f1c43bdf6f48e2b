//! What `aimon-console run` shows a person: its plain output (the model's words, each call and
//! result), streamed or not (`stream: false`, as llama.cpp needs), each piece of text exactly
//! once; and in a real terminal (tmux), Ctrl-C at the y/N approval question ends the run at
//! once, exit 1 `cancelled`, the terminal's modes as they were.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::bin;
use common::tmux::Tmux;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.yaml")
}

/// The example, its demo model's profile with `stream: false` (in `dir`).
fn not_streamed(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(example()).unwrap();
    let profile = "      model: demo\n      request_timeout: 10s\n";
    assert_eq!(
        text.matches(profile).count(),
        1,
        "the example's profile changed"
    );
    let config = dir.join("not-streamed.yaml");
    std::fs::write(
        &config,
        text.replace(profile, &format!("{profile}      stream: false\n")),
    )
    .unwrap();
    config
}

#[test]
fn the_plain_output_shows_the_models_words_once_streamed_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let not_streamed = not_streamed(dir.path());
    for config in [example(), not_streamed] {
        let out = Command::new(bin())
            .arg("--config")
            .arg(&config)
            .arg("--log-file")
            .arg(dir.path().join("aimon.log"))
            .args(["run", "what is 2 plus 3", "--yes"])
            .env("XDG_STATE_HOME", dir.path())
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .expect("run aimon-console");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {stdout}{}",
            config.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        // What the model said before its call, the call, its result, the answer: each once.
        assert_eq!(
            stdout,
            "(demo model) I will add 2 and 3.\n\
             → mcp__notes-trusted__add {\"a\":2,\"b\":3}\n\
             ← ok: 5\n\
             (demo model) 2 plus 3 is 5.\n",
            "{}",
            config.display()
        );
    }
}

#[test]
fn ctrl_c_at_the_approval_question_ends_the_run_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let t = Tmux::start(dir.path(), 120, 30);
    // The terminal's modes before and after, to compare; the exit code on a line of its own.
    t.text(&format!(
        "stty -g > before; env XDG_STATE_HOME={state} {bin} --config {config} --log-file {log} \
         run 'save a note called t1 saying hi'; echo EXIT=$?; stty -g > after",
        state = dir.path().join("state").display(),
        bin = bin(),
        config = example().display(),
        log = dir.path().join("aimon.log").display(),
    ));
    t.keys(&["Enter"]);
    let screen = t.wait_for("allow this call? [y/N]", Duration::from_secs(30));
    assert!(
        screen.contains("mcp__notes-trusted__write_note"),
        "{screen}"
    );
    t.keys(&["C-c"]);
    // Before the fix the run waited for Enter here, whatever Ctrl-C said: a generous deadline
    // that only a hang misses.
    let screen = t.wait_for("EXIT=", Duration::from_secs(15));
    assert!(screen.contains("EXIT=1"), "{screen}");
    assert!(screen.contains("\ncancelled\n"), "{screen}");
    assert!(screen.contains("continue with --resume"), "{screen}");
    let read = |name: &str| {
        let path = dir.path().join(name);
        for _ in 0..50 {
            if let Ok(text) = std::fs::read_to_string(&path) {
                if !text.is_empty() {
                    return text;
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("no {name}");
    };
    assert_eq!(
        read("before"),
        read("after"),
        "the terminal's modes changed"
    );
    // The shell reads the next line as usual.
    t.text("echo still-here");
    t.keys(&["Enter"]);
    t.wait_for("\nstill-here", Duration::from_secs(5));
}
