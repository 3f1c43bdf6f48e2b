//! Fault rows for what a server leaves behind: a grandchild in a session of its own that
//! ignores SIGTERM and SIGHUP, gone after `close_all`, after `check` and after the console quits.

use super::*;

/// The marked processes named `comm` that are alive.
fn marked_named(m: &str, comm: &str) -> Vec<i32> {
    processes_with(m)
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == comm)
        })
        .collect()
}

/// The session of `pid`, from /proc.
fn session(pid: i32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(3)
        .map(String::from)
}

#[tokio::test]
async fn a_setsid_grandchild_ignoring_signals_is_gone_after_close() {
    let m = marker("setsid-grandchild");
    let manager = McpClientManager::new(null_sink(), NotificationTap::none());
    let summary = manager
        .start_all(
            &[
                demo("good", &[], &m),
                demo("faulty", &["--setsid-grandchild", "600"], &m),
            ],
            None,
        )
        .await;
    assert!(summary
        .servers
        .iter()
        .all(|s| s.status == ServerStatus::Ready));
    // It is there, in a session of its own (so the group kill alone misses it).
    let server = manager.pid("faulty").expect("a pid");
    let grandchildren = marked_named(&m, "sleep");
    assert_eq!(grandchildren.len(), 1, "{grandchildren:?}");
    assert_ne!(session(grandchildren[0]), session(server));
    assert!(manager.close_all().await.is_empty());
    let left = wait_gone(&m, Duration::from_secs(3));
    assert!(left.is_empty(), "processes left: {left:?}");
}

#[test]
fn a_setsid_grandchild_is_gone_after_check() {
    let m = marker("setsid-check");
    let config = config_beside_a_good_server(&m, &["--setsid-grandchild", "600"]);
    let (code, report) = check_json(&config.path);
    assert_eq!(code, 0, "{report:#}");
    let left = wait_gone(&m, Duration::from_secs(3));
    assert!(left.is_empty(), "processes left after check: {left:?}");
}

#[test]
fn a_setsid_grandchild_is_gone_after_the_console_quits() {
    use std::io::{BufRead, BufReader};
    let m = marker("setsid-watch");
    let config = config_beside_a_good_server(&m, &["--setsid-grandchild", "600"]);
    let mut watch = default_signals(&mut std::process::Command::new(bin()))
        .arg("--config")
        .arg(&config.path)
        .arg("--log-file")
        .arg(config.dir.path().join("log"))
        .args(["watch", "--json"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start watch");
    let stdout = watch.stdout.take().expect("stdout");
    let pid = i32::try_from(watch.id()).expect("a pid");
    // A watchdog: if the servers never show ready, `watch` is killed and the read below ends.
    let (stop_watchdog, stopped) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let waited = stopped.recv_timeout(Duration::from_secs(60));
        if waited == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            // SAFETY: kill has no memory-safety preconditions; the pid is our own child's.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    let mut ready = 0;
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("a line");
        if line.contains("\"server_started\"") && line.contains("\"ready\"") {
            ready += 1;
            if ready == 2 {
                break;
            }
        }
    }
    let _ = stop_watchdog.send(());
    let _ = watchdog.join();
    assert_eq!(ready, 2, "both servers ready");
    let grandchildren = marked_named(&m, "sleep");
    assert_eq!(grandchildren.len(), 1, "{grandchildren:?}");
    // Ctrl-C quits `watch`: the runtime is closed on the way out.
    // SAFETY: kill has no memory-safety preconditions; the pid is our own child's.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = watch.wait().expect("watch ends");
    assert!(status.success(), "{status:?}");
    let left = wait_gone(&m, Duration::from_secs(3));
    assert!(
        left.is_empty(),
        "processes left after the console quit: {left:?}"
    );
}
