//! The console's OAuth login end to end in tmux: a server that wants a login shows
//! `needs_login`; `o` on it opens the login page (`xdg-open` here is a stand-in that writes the
//! URL down, and the test follows it with plain HTTP, as a signed-in browser would); the
//! server starts once the token arrives; no token is on any screen or in the log.

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::oauth::follow;
use common::tmux::Tmux;
use common::*;

#[test]
fn o_logs_in_from_the_console_and_the_server_starts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut demo = Command::new(bin())
        .args(["demo-server", "--http", "127.0.0.1:0", "--oauth"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("demo-server --http --oauth");
    let mut line = String::new();
    if let Some(out) = demo.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut line);
    }
    let _demo = Background(demo);
    let url = line.trim().trim_start_matches("listening on ").to_string();
    let config = dir.path().join("aimon.yaml");
    std::fs::write(
        &config,
        format!("mcp:\n  servers:\n    - name: secure\n      transport: streamable_http\n      url: {url}\n"),
    )
    .expect("config");
    // The "browser": writes down the URL it is asked to open.
    let bin_dir = dir.path().join("bin");
    std::fs::create_dir_all(&bin_dir).expect("bin dir");
    let opened = dir.path().join("opened-url");
    let browser = bin_dir.join("xdg-open");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\nprintf '%s\\n' \"$1\" > {}\n", opened.display()),
    )
    .expect("fake xdg-open");
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let state = dir.path().join("state");
    let log = dir.path().join("console.log");
    let script = dir.path().join("run.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nPATH={}:$PATH XDG_STATE_HOME={} AIMON_LOG=debug exec {} --config {} --log-file {}\n",
            bin_dir.display(),
            state.display(),
            bin(),
            config.display(),
            log.display()
        ),
    )
    .expect("script");

    let t = Tmux::start(dir.path(), 140, 40);
    t.text("sh run.sh");
    t.keys(&["Enter"]);
    let mut screens = vec![t.wait_for("needs_login", Duration::from_secs(20))];
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
    screens.push(t.wait_for("log in to secure", Duration::from_secs(5)));
    let page = std::fs::read_to_string(&opened).expect("opened URL");
    follow(page.trim());
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
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("JSON");
    let response = &record["credentials"]["token_response"];
    let tokens: Vec<&str> = ["access_token", "refresh_token"]
        .iter()
        .filter_map(|k| response[*k].as_str())
        .collect();
    assert_eq!(tokens.len(), 2, "{record:#}");
    let logged = std::fs::read_to_string(&log).expect("log file");
    assert!(!logged.is_empty());
    for token in tokens {
        for screen in &screens {
            assert!(!screen.contains(token), "a token is on screen:\n{screen}");
        }
        assert!(!logged.contains(token), "a token is in the log file");
    }
}
