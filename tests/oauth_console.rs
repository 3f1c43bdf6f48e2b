//! The console's OAuth login end to end in tmux: a server that wants a login shows
//! `needs_login`; `o` on it opens the login page (`xdg-open` here is a stand-in that writes the
//! URL down, and the test follows it with plain HTTP, as a signed-in browser would); the
//! server starts once the token arrives; no token is on any screen or in the log. The same over
//! `attach`, for a daemon on this machine that keeps its tokens where the console does; a
//! console that keeps them elsewhere is told where to log in instead.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::daemon::daemon;
use common::oauth::{demo_oauth, follow, setup, tokens_in};
use common::tmux::Tmux;
use common::*;

/// A stand-in `xdg-open` in `dir/bin` that writes down the URL it is asked to open: the folder
/// to put first on `PATH`, and the file the URL goes to.
fn browser(dir: &Path) -> (PathBuf, PathBuf) {
    let bin_dir = dir.join("bin");
    std::fs::create_dir_all(&bin_dir).expect("bin dir");
    let opened = dir.join("opened-url");
    let browser = bin_dir.join("xdg-open");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\nprintf '%s\\n' \"$1\" > {}\n", opened.display()),
    )
    .expect("fake xdg-open");
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    (bin_dir, opened)
}

/// Writes `dir/NAME.sh`, which runs the console with `args`, the stand-in browser first on its
/// `PATH` and its state (its tokens) in `state`; returns the command that runs it in tmux.
fn script(dir: &Path, name: &str, bin_dir: &Path, state: &Path, args: &str) -> String {
    let path = dir.join(format!("{name}.sh"));
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nPATH={}:$PATH XDG_STATE_HOME={} AIMON_LOG=debug exec {} {args}\n",
            bin_dir.display(),
            state.display(),
            bin(),
        ),
    )
    .expect("script");
    format!("sh {}", path.display())
}

/// `o` in the console `t`: waits for the page it opens (written to `opened`) and follows it as
/// a signed-in browser would; returns the screen that said so.
fn log_in(t: &Tmux, opened: &Path) -> String {
    t.keys(&["o"]);
    let start = Instant::now();
    while !opened.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the login page was never opened; screen:\n{}",
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let screen = t.wait_for("log in to secure", Duration::from_secs(5));
    let page = std::fs::read_to_string(opened).expect("opened URL");
    follow(page.trim());
    screen
}

/// The one token file in `state`, its mode 0600; its access and refresh tokens.
fn tokens(state: &Path) -> Vec<String> {
    let oauth_dir = state.join("aimon-console/oauth");
    let file = std::fs::read_dir(&oauth_dir)
        .expect("token folder")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a token file");
    let mode = std::fs::metadata(&file)
        .expect("token file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let tokens = tokens_in(&file);
    assert_eq!(tokens.len(), 2, "{tokens:?}");
    tokens
}

/// No token of `tokens` on any of `screens` or in any of the `logs` (each written to).
fn nowhere(tokens: &[String], screens: &[String], logs: &[&Path]) {
    for token in tokens {
        for screen in screens {
            assert!(!screen.contains(token), "a token is on screen:\n{screen}");
        }
        for log in logs {
            let logged = std::fs::read_to_string(log).expect("log file");
            assert!(!logged.is_empty(), "{} is empty", log.display());
            assert!(!logged.contains(token), "a token is in {}", log.display());
        }
    }
}

#[test]
fn o_logs_in_from_the_console_and_the_server_starts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_demo, url) = demo_oauth(&[], &dir.path().join("demo.log"));
    let setup = setup(&url);
    let (bin_dir, opened) = browser(dir.path());
    let state = dir.path().join("state");
    let log = dir.path().join("console.log");
    let args = format!(
        "--config {} --log-file {}",
        setup.config.path.display(),
        log.display()
    );
    let t = Tmux::start(dir.path(), 140, 40);
    t.text(&script(dir.path(), "run", &bin_dir, &state, &args));
    t.keys(&["Enter"]);
    let mut screens = vec![t.wait_for("needs_login", Duration::from_secs(20))];
    screens.push(log_in(&t, &opened));
    screens.push(t.wait_for("1/1 ready", Duration::from_secs(20)));
    for pane in ["2", "3", "5"] {
        t.keys(&[pane]);
        screens.push(t.screen());
    }
    assert!(
        screens[screens.len() - 2].contains("mcp__secure__echo"),
        "{}",
        screens[screens.len() - 2]
    );
    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));
    nowhere(&tokens(&state), &screens, &[&log]);
}

#[test]
fn o_in_a_console_attached_to_a_daemon_here_logs_its_server_in_there() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_demo, url) = demo_oauth(&[], &dir.path().join("demo.log"));
    let setup = setup(&url);
    let (_daemon, socket) = daemon(&setup.config);
    // The daemon keeps its state (its tokens) beside its socket.
    let daemon_state = socket.parent().expect("the socket's folder").to_path_buf();
    let (bin_dir, opened) = browser(dir.path());
    let log = dir.path().join("console.log");
    let args = format!("--log-file {} attach {}", log.display(), socket.display());
    let t = Tmux::start(dir.path(), 140, 40);

    // A console that keeps its tokens elsewhere would store one the daemon never reads: it
    // says where to log in instead, and opens nothing.
    let elsewhere = dir.path().join("elsewhere");
    t.text(&script(
        dir.path(),
        "elsewhere",
        &bin_dir,
        &elsewhere,
        &args,
    ));
    t.keys(&["Enter"]);
    t.wait_for("needs_login", Duration::from_secs(20));
    t.keys(&["o"]);
    let told = t.wait_for(
        "log in to secure where the daemon runs",
        Duration::from_secs(10),
    );
    assert!(
        told.replace('\n', "")
            .contains("aimon-console login secure --config"),
        "{told}"
    );
    assert!(!opened.exists(), "a login page was opened");
    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));

    // One that keeps them where the daemon does logs in; the daemon starts the server again,
    // and it reads the token.
    t.text(&script(dir.path(), "here", &bin_dir, &daemon_state, &args));
    t.keys(&["Enter"]);
    let mut screens = vec![t.wait_for("needs_login", Duration::from_secs(20))];
    screens.push(log_in(&t, &opened));
    screens.push(t.wait_for("1/1 ready", Duration::from_secs(20)));
    t.keys(&["2"]);
    screens.push(t.wait_for("mcp__secure__echo", Duration::from_secs(10)));
    t.keys(&["q"]);
    t.wait_for("READY$", Duration::from_secs(10));
    let daemon_log = daemon_state.join("daemon.log");
    nowhere(&tokens(&daemon_state), &screens, &[&log, &daemon_log]);
}
