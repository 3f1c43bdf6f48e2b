//! Start-up in the console, in a real terminal (tmux): a fast server's tools are callable while
//! a hung one still shows its spinner; the hung one then fails and its row keeps how long it
//! took; `r` starts a failed server again once its command exists; `r` when the config file
//! no longer loads says so.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use common::tmux::Tmux;
use common::*;

fn config_text(m: &str, late: &std::path::Path) -> String {
    let bin = bin();
    format!(
        "mcp:
  servers:
    - name: fast
      command: {bin}
      args: [demo-server]
      env: {{AIMON_TEST_MARKER: {m}}}
      annotation_trust: trust
    - name: hung
      command: {bin}
      args: [demo-server, --hang-init]
      env: {{AIMON_TEST_MARKER: {m}}}
      request_timeout: 20s
    - name: late
      command: {late}
      env: {{AIMON_TEST_MARKER: {m}}}
      annotation_trust: trust
",
        late = late.display()
    )
}

/// The line of the Servers pane that shows `server`.
fn row<'a>(screen: &'a str, server: &str) -> &'a str {
    screen
        .lines()
        .find(|l| {
            l.trim_start_matches('│')
                .split_whitespace()
                .nth(1)
                .is_some_and(|name| name == server)
        })
        .unwrap_or_else(|| panic!("no row for {server}:\n{screen}"))
}

#[test]
fn servers_join_when_ready_and_failed_ones_start_again_by_hand() {
    let m = marker("tui-startup");
    let dir = tempfile::tempdir().unwrap();
    let late = dir.path().join("late-server.sh");
    let config = dir.path().join("aimon.yaml");
    std::fs::write(&config, config_text(&m, &late)).unwrap();
    let log = dir.path().join("console.log");
    let t = Tmux::start(dir.path(), 140, 40);
    t.text(&format!(
        "{} --config {} --log-file {}",
        bin(),
        config.display(),
        log.display()
    ));
    t.keys(&["Enter"]);

    // The fast server is ready and its tools are in while the hung one is in its handshake.
    let screen = t.wait_for("✓ fast", Duration::from_secs(10));
    assert!(row(&screen, "hung").contains("handshake"), "{screen}");
    assert!(
        row(&screen, "late").contains("command_not_found"),
        "{screen}"
    );
    t.keys(&["3", "/"]);
    t.text("fast__echo");
    t.keys(&["Enter"]);
    t.wait_for("mcp__fast__echo", Duration::from_secs(5));
    t.keys(&["Enter"]);
    t.wait_for("Ctrl-S send", Duration::from_secs(5));
    t.keys(&["C-s"]);
    let screen = t.wait_for_row("echo · fast", "ok");
    assert!(
        row(&screen, "hung").contains("handshake"),
        "the call ran while hung still starts:\n{screen}"
    );

    // r on the failed server, once its command exists: it starts and its tools join.
    std::fs::write(&late, format!("#!/bin/sh\nexec {} demo-server\n", bin())).unwrap();
    std::fs::set_permissions(&late, std::fs::Permissions::from_mode(0o755)).unwrap();
    t.keys(&["1", "j", "j", "r"]);
    t.wait_for("✓ late", Duration::from_secs(10));
    t.keys(&["3", "/"]);
    t.text("late__");
    t.keys(&["Enter"]);
    let screen = t.wait_for("mcp__late__echo", Duration::from_secs(5));
    assert!(screen.contains("mcp__late__write_note"), "{screen}");

    // r when the config file no longer loads: it says so, and the server stays as it was.
    std::fs::write(&config, "mcp:\n  servers: [\n").unwrap();
    t.keys(&["1", "r"]);
    let screen = t.wait_for("not restarted", Duration::from_secs(5));
    assert!(
        screen.contains("late not restarted: the config file does not load"),
        "{screen}"
    );
    assert!(row(&screen, "late").contains('✓'), "{screen}");

    // The hung server fails its handshake after its 20 s; the row keeps about 20 s.
    let screen = t.wait_for("handshake_timeout", Duration::from_secs(40));
    let took = |screen: &str| -> String {
        row(screen, "hung")
            .split_whitespace()
            .find(|w| w.ends_with('s') && w.contains('.'))
            .unwrap_or_default()
            .to_string()
    };
    let first = took(&screen);
    assert!(
        first.starts_with("20.") || first.starts_with("19.") || first.starts_with("21."),
        "about 20 s: {first:?}\n{screen}"
    );
    std::thread::sleep(Duration::from_secs(2));
    let later = t.screen();
    assert_eq!(took(&later), first, "frozen:\n{later}");
    assert!(row(&later, "fast").contains('✓'), "{later}");

    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));
    assert!(wait_gone(&m, Duration::from_secs(5)).is_empty());
}
