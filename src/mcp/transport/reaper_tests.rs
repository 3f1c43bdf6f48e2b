//! Tests of `reaper.rs` over real processes: a server whose grandchild escapes its process
//! group and session (ignoring SIGTERM and SIGHUP) loses it on close and when it dies, orphans
//! that exit by themselves are reaped, and tokio's own children keep their exit statuses.

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, BufReader};

use super::*;
use crate::mcp::transport::process::{Pipes, ServerProcess, SpawnSpec};
use crate::mcp::transport::stderr::StderrRing;

#[test]
fn stat_lines_are_read_from_the_last_parenthesis() {
    let line = b"4242 (a (b) c) S 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 98765 1 1 0\n";
    let p = parse_stat(line).expect("a stat line");
    assert_eq!(
        p,
        Proc {
            pid: 4242,
            state: b'S',
            ppid: 1,
            pgrp: 4242,
            session: 4242,
            start: 98765
        }
    );
    assert!(parse_stat(b"12 (x) Z 1").is_none(), "too few fields");
    assert!(parse_stat(b"garbage").is_none());
}

#[test]
fn only_orphans_count_as_inherited() {
    let p = |pgrp, session, pid| Proc {
        pid,
        state: b'Z',
        ppid: 1,
        pgrp,
        session,
        start: 0,
    };
    // The console: session 100, group 100. Its own children: in its group, or leading one.
    assert!(!is_inherited(&p(100, 100, 7), 100, 100));
    assert!(!is_inherited(&p(7, 100, 7), 100, 100));
    // Orphans: another session, or a member (not the leader) of another group.
    assert!(is_inherited(&p(7, 7, 7), 100, 100));
    assert!(is_inherited(&p(50, 100, 7), 100, 100));
}

/// A "server": `sh -c SCRIPT`, stdout read line by line.
fn server(
    script: &str,
) -> (
    ServerProcess,
    tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
) {
    let spec = SpawnSpec {
        command: "sh".into(),
        args: vec!["-c".into(), script.into()],
        env: Vec::new(),
        cwd: None,
        sandbox: None,
    };
    let (process, Pipes { stdin, stdout, .. }) =
        ServerProcess::spawn(&spec, Arc::new(StderrRing::default()), Arc::new(|_| {}))
            .expect("spawn sh");
    // stdin stays open until the process is dropped or closed by the test.
    std::mem::forget(stdin);
    (process, BufReader::new(stdout).lines())
}

/// `sh` that starts `sleep 600` in a session of its own, ignoring SIGTERM and SIGHUP, holding
/// none of the pipes, prints its pid, and waits.
const ESCAPES: &str =
    "setsid sh -c 'trap \"\" TERM HUP; exec sleep 600' </dev/null >/dev/null 2>&1 & echo $!; exec sleep 600";

async fn pid_line(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> i32 {
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("a line in time")
        .expect("read")
        .expect("a line");
    line.trim().parse().expect("a pid")
}

/// Waits up to 5 s for `pid` to be gone from /proc (killed and reaped); whether it went.
async fn gone(pid: i32) -> bool {
    for _ in 0..500 {
        if Proc::read(pid).is_none() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

fn session_of(pid: i32) -> Option<i32> {
    Proc::read(pid).map(|p| p.session)
}

/// What closing a server does with its process: its group ended, then the descendants found
/// `before` and its orphans found now killed and reaped (`McpClient::close`).
async fn shutdown(process: &ServerProcess, before: &[Found]) {
    process.end_group(Duration::from_millis(100)).await;
    let mut escaped = before.to_vec();
    escaped.extend(process.descendants());
    end_escaped(&escaped).await;
}

#[tokio::test]
async fn an_escaped_grandchild_is_killed_and_reaped_when_its_server_is_closed() {
    let (process, mut lines) = server(ESCAPES);
    let grandchild = pid_line(&mut lines).await;
    // It really escaped: a session of its own, so the group kill misses it.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_ne!(session_of(grandchild), session_of(process.pid()));
    let before = process.descendants();
    assert!(before.iter().any(|f| f.pid == grandchild), "{before:?}");
    shutdown(&process, &before).await;
    assert!(
        gone(grandchild).await,
        "pid {grandchild} outlived its server"
    );
}

#[tokio::test]
async fn an_escaped_grandchild_is_killed_when_its_server_dies() {
    // The server exits by itself once the grandchild runs.
    let (process, mut lines) = server(
        "setsid sh -c 'trap \"\" TERM HUP; exec sleep 600' </dev/null >/dev/null 2>&1 & echo $!; sleep 0.3",
    );
    let grandchild = pid_line(&mut lines).await;
    let exit = process.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(
        exit,
        Some(crate::mcp::transport::process::ExitInfo::Code(0))
    );
    assert!(
        gone(grandchild).await,
        "pid {grandchild} outlived its server"
    );
    drop(process);
}

#[tokio::test]
async fn a_sweep_reaps_orphans_and_never_a_child_someone_waits_for() {
    assert!(enable(), "the test process becomes a subreaper");
    // A double fork: the subshell exits at once, so the setsid'd sleep is orphaned to us.
    let (process, mut lines) =
        server("(setsid sh -c 'sleep 0.2' </dev/null >/dev/null 2>&1 & echo $!); exec sleep 600");
    let orphan = pid_line(&mut lines).await;
    // Children of tokio's own, one in our group and one leading its own (as a `bash` tool
    // shell does), exit and stay zombies until tokio waits for them.
    let mut own = tokio::process::Command::new("sh")
        .args(["-c", "exit 7"])
        .spawn()
        .expect("spawn");
    let mut leader = tokio::process::Command::new("sh")
        .args(["-c", "exit 9"])
        .process_group(0)
        .spawn()
        .expect("spawn");
    // Wait until all three have exited (the orphan may already be reaped by a sweep of another
    // test in this process: gone is what counts).
    let me = std::process::id() as i32;
    let zombie = |pid: Option<u32>| {
        pid.and_then(|p| Proc::read(p as i32))
            .is_some_and(|p| p.is_zombie() && p.ppid == me)
    };
    for _ in 0..500 {
        let orphan_done = Proc::read(orphan).is_none_or(|p| p.is_zombie());
        if orphan_done && zombie(own.id()) && zombie(leader.id()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        zombie(own.id()) && zombie(leader.id()),
        "tokio's children are zombies now"
    );
    reap_orphans();
    assert!(Proc::read(orphan).is_none(), "the orphan was reaped");
    // tokio still gets its children's statuses.
    assert_eq!(own.wait().await.expect("tokio waits").code(), Some(7));
    assert_eq!(leader.wait().await.expect("tokio waits").code(), Some(9));
    assert!(process.exit_info().is_none(), "the server still runs");
    shutdown(&process, &[]).await;
}

/// The tree walked down from a leader (the `children` files) is the tree a scan of every
/// process finds, grandchildren included.
#[test]
fn the_walked_tree_is_the_scanned_tree() {
    enable();
    let mut leader = std::process::Command::new("sh")
        .args(["-c", "sleep 30 & (sleep 30 & sleep 30; true) & wait"])
        .spawn()
        .expect("sh spawns");
    let pid = leader.id() as i32;
    let me = std::process::id() as i32;
    // Until the whole tree is there: the leader, its two children, a grandchild.
    let mut walked = Vec::new();
    for _ in 0..200 {
        walked = walked_descendants(&[(Some(pid), "no-mark")], me).expect("children files");
        if walked.len() >= 4 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut scanned = scanned_descendants(Some(pid), "no-mark", me);
    walked.sort_by_key(|f| f.pid);
    scanned.sort_by_key(|f| f.pid);
    kill(&walked);
    let _ = leader.kill();
    let _ = leader.wait();
    assert!(walked.len() >= 4, "the tree: {walked:?}");
    assert_eq!(walked, scanned);
}
