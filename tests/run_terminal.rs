//! What `aimon-console run` shows a person: its plain output (the model's words, each call and
//! result), streamed or not (`stream: false`, as llama.cpp needs), each piece of text exactly
//! once; and in a real terminal (tmux), Ctrl-C at the y/N approval question ends the run at
//! once, exit 1 `cancelled`, the terminal's modes as they were; and a signal (SIGINT, SIGTERM,
//! SIGHUP, or SIGHUP ignored under `nohup`) while the servers start ends it the same way.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::tmux::Tmux;
use common::{bin, write_config};

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

/// Ctrl-C (SIGINT) while `run` waits for a server that never finishes its handshake and a
/// model endpoint that never says where it listens: the run ends at once `cancelled` (exit 1,
/// the prompt and why it stopped in the transcript), not at the start-up deadline or the
/// endpoint's `request_timeout`, and not killed by the signal with its children left behind.
#[test]
fn ctrl_c_while_the_servers_start_ends_the_run_cancelled() {
    stopped_while_starting(&[libc::SIGINT], false);
}

/// The same for SIGTERM (`kill`, `timeout`, a cancelled CI job) and SIGHUP (the terminal
/// closed): before, either killed `run` outright, its transcript without a `stopped` line.
#[test]
fn sigterm_or_sighup_while_the_servers_start_ends_the_run_cancelled() {
    stopped_while_starting(&[libc::SIGTERM], false);
    stopped_while_starting(&[libc::SIGHUP], false);
}

/// Started with SIGHUP ignored (`nohup`), `run` goes on through a SIGHUP; SIGTERM still
/// stops it.
#[test]
fn under_nohup_a_sighup_is_ignored_and_sigterm_stops_the_run() {
    stopped_while_starting(&[libc::SIGHUP, libc::SIGTERM], true);
}

/// Starts `run` on a hung server and a silent endpoint, sends `signals` in turn (a second
/// apart), and checks that the last one (only) ended it `cancelled`, its children gone and
/// the transcript saying why. `ignore_hup`: SIGHUP is ignored in `run` from the start.
fn stopped_while_starting(signals: &[i32], ignore_hup: bool) {
    use std::os::unix::process::CommandExt;
    let state = tempfile::tempdir().unwrap();
    let m = common::marker("run-stop-start");
    // The model endpoint is a command that never says where it listens.
    let config = write_config(&format!(
        "mcp:\n  startup_budget: 60s\n  servers:\n{}agent:\n  default: main\n  models:\n    main:\n      command: sh\n      args: [-c, sleep 120]\n      env: {{AIMON_TEST_MARKER: {m}}}\n      model: demo\n      request_timeout: 60s\n",
        common::demo_server("hung", &["--hang-init"], "", &m)
    ));
    let mut command = Command::new(bin());
    command
        .arg("--config")
        .arg(&config.path)
        .arg("--log-file")
        .arg(state.path().join("aimon.log"))
        .args(["run", "what is 2 plus 3"])
        .env("XDG_STATE_HOME", state.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    common::default_signals(&mut command);
    if ignore_hup {
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                libc::signal(libc::SIGHUP, libc::SIG_IGN);
                Ok(())
            });
        }
    }
    let mut child = command.spawn().expect("run aimon-console");
    // The server is up and waiting in its handshake (which never ends), the endpoint waited for.
    let started = std::time::Instant::now();
    while common::processes_with(&m).len() < 2 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "the server and the endpoint never started: {:?}",
            common::processes_with(&m)
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let pid = i32::try_from(child.id()).expect("a pid");
    let (last, before) = signals.split_last().expect("a signal");
    for signal in before {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(pid, *signal);
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
        assert!(
            child.try_wait().expect("wait").is_none(),
            "signal {signal} ended the run"
        );
    }
    // SAFETY: as above.
    unsafe {
        libc::kill(pid, *last);
    }
    // Well inside the 60 s start-up budget: only a run that waited for it misses this.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still running after signal {last}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let out = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        status.code(),
        Some(1),
        "signal {last}: {status:?}: {stderr}"
    );
    assert!(stderr.lines().any(|l| l == "cancelled"), "{stderr}");
    assert!(
        common::wait_gone(&m, std::time::Duration::from_secs(5)).is_empty(),
        "the server or the endpoint was left running"
    );
    let sessions = state.path().join("aimon-console/sessions");
    let file = std::fs::read_dir(&sessions)
        .expect("a sessions dir")
        .flatten()
        .next()
        .expect("a session file")
        .path();
    let text = std::fs::read_to_string(file).expect("read the session");
    assert!(text.contains("\"type\":\"prompt\""), "{text}");
    assert!(text.contains("\"reason\":\"cancelled\""), "{text}");
}
