//! The console end to end in a real terminal: the real binary in tmux against demo servers.
//! Approvals (allow and deny), the trust toggle with its preview and write-back (a comment in the
//! file survives) and the row's `restart pending` at 140 and 80 columns, restart-all showing the
//! new traits, escape sequences from a hostile server
//! kept off the terminal, idle CPU, a burst of keys read to its end, and a terminal left as
//! it was.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::tmux::{cpu_ticks, Tmux};
use common::*;

fn config_text(m: &str) -> String {
    let bin = bin();
    format!(
        "# operator comment: keep me
mcp:
  servers:
    - name: notes
      command: {bin}
      args: [demo-server]
      env: {{AIMON_TEST_MARKER: {m}}}
    - name: liar   # lies about write_note and delete_note
      command: {bin}
      args: [demo-server, --lie]
      env: {{AIMON_TEST_MARKER: {m}}}
    - name: evil
      command: {bin}
      args: [demo-server, --evil]
      env: {{AIMON_TEST_MARKER: {m}}}
      annotation_trust: trust
"
    )
}

/// Types a tool filter and opens the argument editor of the first match, then sends it.
fn call_tool(t: &Tmux, filter: &str) {
    t.keys(&["/"]);
    t.text(filter);
    t.keys(&["Enter", "Enter"]);
    t.wait_for("Ctrl-S send", Duration::from_secs(5));
}

#[test]
fn the_console_end_to_end() {
    let m = marker("tui");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("aimon.yaml");
    std::fs::write(&config, config_text(&m)).unwrap();
    let log = dir.path().join("console.log");

    let t = Tmux::start(dir.path(), 140, 40);
    t.text("printf 'before-the-console\\n'");
    t.keys(&["Enter"]);
    t.wait_for("before-the-console", Duration::from_secs(5));
    t.text(&format!(
        "{} --config {} --log-file {}",
        bin(),
        config.display(),
        log.display()
    ));
    t.keys(&["Enter"]);
    let screen = t.wait_for("3/3 ready", Duration::from_secs(20));
    assert!(screen.contains("✓ notes"), "{screen}");

    // A mutating call: the approval modal names MUTATING and why; y runs it.
    t.keys(&["3"]);
    call_tool(&t, "notes__write");
    t.keys(&["C-s"]);
    let screen = t.wait_for_question("Approval needed", Duration::from_secs(5));
    assert!(screen.contains("mcp__notes__write_note"), "{screen}");
    assert!(screen.contains("MUTATING"), "{screen}");
    assert!(
        screen.contains("ignored: server trust is ignore"),
        "{screen}"
    );
    t.keys(&["y"]);
    t.wait_for_row("#1", "ok");

    // Another: n denies it.
    t.keys(&["3"]);
    call_tool(&t, "notes__write");
    t.keys(&["C-s"]);
    t.wait_for_question("Approval needed", Duration::from_secs(5));
    t.keys(&["n"]);
    t.wait_for_row("#2", "denied");

    // The hostile server: read-only under trust, runs at once; its escapes never arrive.
    t.keys(&["3"]);
    call_tool(&t, "evil__echo");
    t.text("hi");
    t.keys(&["C-s"]);
    // The escapes in its description flag it (tool poisoning): read-only and trusted, it asks.
    t.wait_for_question(
        "flagged: description: terminal escape sequences",
        Duration::from_secs(10),
    );
    t.keys(&["y"]);
    t.wait_for_row("#3", "ok");

    // Trust on the liar: preview, write (the comments survive), restart pending.
    t.keys(&["1", "j"]);
    t.keys(&["t"]);
    let screen = t.wait_for("Trust: liar", Duration::from_secs(5));
    assert!(screen.contains("ignore → trust"), "{screen}");
    let write_line = screen
        .lines()
        .find(|l| l.contains("mcp__liar__write_note"))
        .unwrap_or_default();
    assert!(
        write_line.contains("MUTATING, destructive → read-only"),
        "{screen}"
    );
    t.keys(&["y"]);
    let screen = t.wait_for("wrote annotation_trust", Duration::from_secs(5));
    assert!(
        screen.contains("wrote annotation_trust: trust for liar"),
        "{screen}"
    );
    // The badge is on the server's row, whole, at 140 columns.
    let liar = screen
        .lines()
        .find(|l| l.contains("✓ liar "))
        .unwrap_or_default();
    assert!(liar.contains("restart pending"), "{screen}");
    // Calls name the tool itself, then its server.
    assert!(screen.contains("write_note · notes"), "{screen}");
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(
        written.starts_with("# operator comment: keep me\n"),
        "{written}"
    );
    assert!(written.contains("- name: liar   # lies about write_note and delete_note\n      annotation_trust: trust\n"), "{written}");

    // R: everything restarts and the liar's tools now carry the (believed) lie.
    t.keys(&["R"]);
    t.wait_for("every server restarted: 3/3 ready", Duration::from_secs(20));
    let (screen, row) = liar_write_note_row(&t);
    assert!(row.contains("read-only"), "{screen}");
    assert!(row.contains('*'), "a changed tool is marked: {screen}");
    assert!(!screen.contains("restart pending"), "{screen}");

    // Nothing the hostile server sent reached the terminal.
    assert_eq!(t.display("#{pane_title}"), "original-title");
    let screen = t.screen();
    assert!(!screen.contains("pwned"), "{screen}");

    // Idle: no frames, no CPU.
    let pid = t.console_pid();
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(3));
    let used = cpu_ticks(pid) - before;
    // 3 s is 300 ticks at 100 Hz; an idle console uses (almost) none.
    assert!(used <= 3, "idle console used {used} ticks in 3 s");

    // q: the terminal is back as it was.
    t.keys(&["q"]);
    let screen = t.wait_for("READY$", Duration::from_secs(10));
    assert!(screen.contains("before-the-console"), "{screen}");
    assert_eq!(t.display("#{alternate_on}"), "0");
    assert_eq!(t.display("#{cursor_flag}"), "1");
    assert_eq!(t.display("#{pane_title}"), "original-title");
    assert!(
        wait_gone(&m, Duration::from_secs(3)).is_empty(),
        "servers left behind"
    );
}

/// The Tools pane filtered to the liar's write_note: the screen, and that tool's row.
fn liar_write_note_row(t: &Tmux) -> (String, String) {
    t.keys(&["3", "/"]);
    t.text("liar__write");
    t.keys(&["Enter"]);
    let screen = t.wait_for("mcp__liar__write_note", Duration::from_secs(5));
    let row = screen
        .lines()
        .find(|l| l.contains("mcp__liar__write_note "))
        .unwrap_or_default()
        .to_string();
    (screen, row)
}

#[test]
fn compact_layout_at_80x24_and_resize() {
    let m = marker("tui-small");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("aimon.yaml");
    std::fs::write(&config, config_text(&m)).unwrap();
    let t = launch(dir.path(), &config, (80, 24));
    let screen = t.wait_for("3/3 ready", Duration::from_secs(20));
    assert!(screen.contains("Details  Tools  Calls"), "{screen}");
    assert!(screen.contains("? help"), "{screen}");
    // No line left blank at the bottom: with no notice, the pane's keys sit above the global
    // ones, each line whole.
    let lines: Vec<&str> = screen.lines().collect();
    let last = lines.len() - 1;
    assert!(lines[last].trim_end().ends_with("? help"), "{screen}");
    assert!(lines[last - 1].starts_with("t trust"), "{screen}");
    // The trust toggle at 80 columns: the row still says a restart is pending.
    t.keys(&["j", "t"]);
    t.wait_for("Trust: liar", Duration::from_secs(5));
    t.keys(&["y"]);
    let screen = t.wait_for("wrote annotation_trust", Duration::from_secs(5));
    let liar = screen
        .lines()
        .find(|l| l.contains("✓ liar "))
        .unwrap_or_default();
    assert!(liar.contains("restart pending"), "{screen}");
    // `r` applies it: the liar's write_note is read-only now, and marked as changed.
    t.keys(&["r"]);
    t.wait_for("liar restarted: ready", Duration::from_secs(20));
    let (screen, row) = liar_write_note_row(&t);
    assert!(row.contains("read-only"), "{screen}");
    assert!(
        row.contains('*'),
        "a changed tool is marked after r: {screen}"
    );
    t.keys(&["Escape"]);
    t.keys(&["?"]);
    t.wait_for("aimon-console: keys", Duration::from_secs(5));
    t.keys(&["Escape"]);
    // Grow the window: the large layout replaces the compact one.
    t.cmd()
        .args(["resize-window", "-t", "main", "-x", "140", "-y", "40"])
        .status()
        .unwrap();
    let screen = t.wait_for("┌ Calls", Duration::from_secs(5));
    assert!(screen.contains("┌ Tools"), "{screen}");
    // And back: the compact layout again, drawn whole at the smaller size.
    t.cmd()
        .args(["resize-window", "-t", "main", "-x", "80", "-y", "24"])
        .status()
        .unwrap();
    let screen = t.wait_for("Details  Tools  Calls", Duration::from_secs(5));
    let last = screen.lines().last().unwrap_or_default();
    assert!(last.trim_end().ends_with("? help"), "{screen}");
    assert!(!screen.contains("┌ Calls"), "{screen}");
    t.keys(&["C-c"]);
    t.wait_for("READY$", Duration::from_secs(10));
    assert_eq!(t.display("#{alternate_on}"), "0");
    assert!(wait_gone(&m, Duration::from_secs(3)).is_empty());
}

/// A burst of typed keys longer than one read of the terminal (crossterm reads 1,024 bytes at
/// a time) is taken to its end at once: a key after the first 1,024 bytes is not held back
/// until the next key arrives.
#[test]
fn a_burst_of_typed_keys_is_read_to_its_end() {
    let m = marker("tui-burst");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("aimon.yaml");
    std::fs::write(&config, config_text(&m)).unwrap();
    let t = launch(dir.path(), &config, (80, 24));
    t.wait_for("3/3 ready", Duration::from_secs(20));
    // 1,100 keys the Servers pane does nothing with, then `?`: help opens with no further key.
    t.text(&format!("{}?", "x".repeat(1_100)));
    t.wait_for("aimon-console: keys", Duration::from_secs(5));
    t.keys(&["Escape"]);
    t.keys(&["C-c"]);
    t.wait_for("READY$", Duration::from_secs(10));
    assert!(wait_gone(&m, Duration::from_secs(3)).is_empty());
}

/// RSS of a process in KiB.
fn rss_kib(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Calls `tool` from the Tools pane with its first argument lines replaced by `lines` (none:
/// the prefilled arguments as they are).
fn send_call(t: &Tmux, tool: &str, lines: &[&str]) {
    t.keys(&["3"]);
    call_tool(t, tool);
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

/// The console in a 140×40 window of its own on one trusted `--live-tools` demo server named
/// `live` (its processes marked `m`), the config ending in `more`; once it is ready.
fn live_console(dir: &std::path::Path, m: &str, more: &str) -> Tmux {
    let config = dir.join("aimon.yaml");
    std::fs::write(
        &config,
        format!(
            "mcp:\n  servers:\n    - name: live\n      command: {}\n      args: [demo-server, --live-tools]\n      env: {{AIMON_TEST_MARKER: {m}}}\n      annotation_trust: trust\n{more}",
            bin()
        ),
    )
    .unwrap();
    let t = launch(dir, &config, (140, 40));
    t.wait_for("1/1 ready", Duration::from_secs(20));
    t
}

/// The console on `config` in a window of `size` of its own (its log in `dir`), started.
fn launch(dir: &std::path::Path, config: &std::path::Path, (w, h): (u16, u16)) -> Tmux {
    let t = Tmux::start(dir, w, h);
    t.text(&format!(
        "{} --config {} --log-file {}",
        bin(),
        config.display(),
        dir.join("log").display()
    ));
    t.keys(&["Enter"]);
    t
}

#[test]
fn live_servers_in_the_console() {
    let m = marker("tui-live");
    let dir = tempfile::tempdir().unwrap();
    let t = live_console(dir.path(), &m, "policy:\n  approval: ask_all\n");
    let pid = t.console_pid();
    let rss_before = rss_kib(pid);

    // A flood of 20,000 log messages: the console keeps answering keys while it pours in.
    send_call(&t, "live__flood", &["\"count\": 20000,"]);
    t.wait_for_question("Approval needed", Duration::from_secs(5));
    t.keys(&["y"]);
    t.keys(&["5"]);
    t.wait_for("Enter whole line", Duration::from_secs(5));
    t.keys(&["4"]);
    t.wait_for("Enter result", Duration::from_secs(5));
    let screen = t.wait_for("Events 20000", Duration::from_secs(30));
    assert!(screen.contains("(last 5000 kept)"), "{screen}");
    t.wait_for_row("#1", "ok");
    let grown = rss_kib(pid).saturating_sub(rss_before);
    assert!(
        grown < 64 * 1024,
        "the console grew by {grown} KiB during the flood"
    );

    // A call that never answers: c cancels it, and it ends at once.
    send_call(&t, "live__never_answer", &[]);
    t.wait_for_question("Approval needed", Duration::from_secs(5));
    t.keys(&["y"]);
    t.wait_for("running", Duration::from_secs(5));
    t.keys(&["4", "End"]);
    let cancelled_at = Instant::now();
    t.keys(&["c"]);
    let screen = t.wait_for_row("#2", "cancelled");
    assert!(cancelled_at.elapsed() < Duration::from_secs(2), "{screen}");

    // echo approved for the session runs without asking ...
    send_call(&t, "live__echo", &["\"text\": \"one\""]);
    t.wait_for_question("allow this tool for the session", Duration::from_secs(5));
    t.keys(&["a"]);
    t.wait_for("#3", Duration::from_secs(5));
    send_call(&t, "live__echo", &["\"text\": \"two\""]);
    let screen = t.wait_for("#4", Duration::from_secs(5));
    assert!(!screen.contains("Approval needed"), "{screen}");
    // ... until the server re-annotates it destructive: after the turn boundary the new traits
    // show, marked changed since approved, and the next call asks again (with no session
    // approval offered).
    send_call(
        &t,
        "live__change_tools",
        &["\"action\": \"annotate\",", "\"tool\": \"echo\""],
    );
    t.wait_for_question("Approval needed", Duration::from_secs(5));
    t.keys(&["y"]);
    let screen = t.wait_for(
        "tools changed: 0 added, 0 removed, 1 changed",
        Duration::from_secs(10),
    );
    assert!(screen.contains("session approvals forgotten"), "{screen}");
    t.keys(&["3", "/"]);
    t.text("live__echo");
    t.keys(&["Enter"]);
    let screen = t.wait_for("mcp__live__echo", Duration::from_secs(5));
    let row = screen
        .lines()
        .find(|l| l.contains("≠ mcp__live__echo"))
        .unwrap_or_default()
        .to_string();
    assert!(row.contains("MUTATING") && row.contains("yes"), "{screen}");
    assert!(row.contains("changed since approved"), "{screen}");
    t.keys(&["Enter"]);
    t.wait_for("Ctrl-S send", Duration::from_secs(5));
    t.keys(&["C-s"]);
    let screen = t.wait_for_question("Approval needed", Duration::from_secs(5));
    assert!(
        screen.contains("DESTRUCTIVE") && screen.contains("no session approval"),
        "{screen}"
    );
    t.keys(&["n"]);

    // `l` on a server that logs: the level it is asked for, said once the server took it.
    t.keys(&["1", "l"]);
    t.wait_for("now sends log messages at", Duration::from_secs(5));

    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));
    assert_eq!(t.display("#{alternate_on}"), "0");
    assert!(wait_gone(&m, Duration::from_secs(3)).is_empty());
}

#[test]
fn a_bearer_token_never_reaches_the_screen() {
    const TOKEN: &str = "e2e-secret-7f3a9c";
    let dir = tempfile::tempdir().unwrap();
    // The remote server wants the token; it prints its URL on its first line.
    let mut demo = Command::new(bin())
        .args([
            "demo-server",
            "--http",
            "127.0.0.1:0",
            "--require-bearer",
            TOKEN,
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("demo-server --http");
    let mut line = String::new();
    if let Some(out) = demo.stdout.take() {
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line);
    }
    let url = line.trim().trim_start_matches("listening on ").to_string();
    let config = dir.path().join("aimon.yaml");
    std::fs::write(
        &config,
        format!(
            "mcp:\n  servers:\n    - name: remote\n      transport: streamable_http\n      url: {url}\n      bearer_token: ${{AIMON_E2E_TOKEN}}\n      headers: {{X-Api-Key: \"${{AIMON_E2E_TOKEN}}\"}}\n"
        ),
    )
    .unwrap();
    // The token goes in through the environment, never typed where the screen shows it.
    let log = dir.path().join("console.log");
    let script = dir.path().join("run.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nAIMON_E2E_TOKEN={TOKEN} AIMON_LOG=debug exec {} --config {} --log-file {}\n",
            bin(),
            config.display(),
            log.display()
        ),
    )
    .unwrap();
    let t = Tmux::start(dir.path(), 140, 40);
    t.text("sh run.sh");
    t.keys(&["Enter"]);
    let mut screens = vec![t.wait_for("1/1 ready", Duration::from_secs(20))];
    for pane in ["2", "3", "5"] {
        t.keys(&[pane]);
        screens.push(t.screen());
    }
    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));
    let _ = demo.kill();
    let _ = demo.wait();
    for screen in &screens {
        assert!(!screen.contains(TOKEN), "the token is on screen:\n{screen}");
    }
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!logged.is_empty(), "the console logged nothing");
    assert!(!logged.contains(TOKEN), "the token is in the log file");
}

/// `R` while a call runs asks first; `y` restarts every server, the call ends `cancelled`
/// (not cut off as an error), and the next call is numbered on from it.
#[test]
fn restart_all_with_a_call_running_asks_and_cancels_it() {
    let m = marker("tui-restart-all");
    let dir = tempfile::tempdir().unwrap();
    let t = live_console(dir.path(), &m, "");
    send_call(&t, "live__never_answer", &[]);
    t.wait_for_row("#1", "running");
    t.keys(&["R"]);
    t.wait_for(
        "1 call is still running: restart every server and cancel it?",
        Duration::from_secs(5),
    );
    t.keys(&["y"]);
    t.wait_for_row("#1", "cancelled");
    // The restart's outcome, not the title: "1/1 ready" may still be the screen from before
    // the restart began, and a call typed while its tools are gone opens nothing.
    t.wait_for("every server restarted: 1/1 ready", Duration::from_secs(20));
    send_call(&t, "live__echo", &["\"text\": \"after\""]);
    t.wait_for_row("#2", "ok");
    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}

/// A server flooding stderr for ten seconds beside one that logs: the Events pane shows at
/// most one line about dropped events, and the other server's latest log messages.
#[test]
fn a_stderr_flood_leaves_one_drop_line_and_the_events_readable() {
    let m = marker("tui-flood");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("aimon.yaml");
    std::fs::write(
        &config,
        format!(
            "mcp:\n  servers:\n    - name: live\n      command: {bin}\n      args: [demo-server, --live-tools]\n      env: {{AIMON_TEST_MARKER: {m}}}\n      annotation_trust: trust\n    - name: noisy\n      command: {bin}\n      args: [demo-server, --flood-stderr]\n      env: {{AIMON_TEST_MARKER: {m}}}\n",
            bin = bin()
        ),
    )
    .unwrap();
    let t = launch(dir.path(), &config, (140, 40));
    t.wait_for("2/2 ready", Duration::from_secs(20));
    std::thread::sleep(Duration::from_secs(10));
    send_call(&t, "live__flood", &["\"count\": 3,"]);
    t.keys(&["5"]);
    let screen = t.wait_for(r#"flood: {"n":3,"of":3"#, Duration::from_secs(30));
    assert!(screen.matches("events dropped").count() <= 1, "{screen}");
    // The call's end comes after its log messages: then nothing is at stake in quitting.
    t.wait_for_row("#1", "ok");
    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));
    let left = wait_gone(&m, Duration::from_secs(5));
    assert!(left.is_empty(), "left running: {left:?}");
}
