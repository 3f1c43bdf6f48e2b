//! `command` hooks: run a program with the event as JSON on its stdin, in its own process
//! group, bounded in time and output. At the timeout (or when the runtime closes) the whole
//! group is killed; when the program exits, whatever it left running in its group is killed
//! too, so nothing a hook started outlives its run.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// At most this many bytes of stdout, and of stderr, are kept.
const MAX_OUTPUT: usize = 64 * 1024;
/// After the program exits, how long its pipes may stay open before its group is killed (never
/// past the hook's timeout).
const DRAIN_GRACE: Duration = Duration::from_millis(200);

/// How a command hook's run ended.
#[derive(Debug)]
pub(super) enum Ran {
    /// It exited (or was killed by a signal it did not get from us).
    Exited {
        code: Option<i32>,
        signal: Option<i32>,
        stdout: String,
        stderr: String,
    },
    /// Still running at the timeout: its group was killed.
    TimedOut,
    /// The runtime closed (or the call was cancelled) while it ran: its group was killed.
    Cancelled,
    /// It could not be started.
    SpawnFailed(String),
}

/// Runs `argv` in `cwd` with `stdin` written to it and `AIMON_HOOK_EVENT` set to `event`.
pub(super) async fn run(
    argv: &[String],
    cwd: &Path,
    stdin: Vec<u8>,
    event: &str,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Ran {
    let Some((program, args)) = argv.split_first() else {
        return Ran::SpawnFailed("no program to run".to_string());
    };
    let spawned = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .env("AIMON_HOOK_EVENT", event)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn();
    // Nothing past the timeout: draining the pipes after an exit counts too.
    let deadline = tokio::time::Instant::now() + timeout;
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return Ran::SpawnFailed(format!("could not start {program}: {e}")),
    };
    // The child leads its own group, so its pid is the group id.
    let group = child.id().and_then(|pid| i32::try_from(pid).ok());
    if let Some(mut pipe) = child.stdin.take() {
        // A program that never reads its stdin must not hold anything up: write in the
        // background, and a closed pipe is fine.
        tokio::spawn(async move {
            let _ = pipe.write_all(&stdin).await;
            let _ = pipe.shutdown().await;
        });
    }
    let mut stdout = collect(child.stdout.take());
    let mut stderr = collect(child.stderr.take());
    let ended = tokio::select! {
        status = child.wait() => Some(status),
        () = tokio::time::sleep_until(deadline) => None,
        () = cancel.cancelled() => None,
    };
    let Some(status) = ended else {
        kill_group(group);
        let _ = child.start_kill();
        let _ = child.wait().await;
        stdout.abort();
        stderr.abort();
        return if cancel.is_cancelled() {
            Ran::Cancelled
        } else {
            Ran::TimedOut
        };
    };
    // Its pipes may be held open by something it left running: give them a moment, then kill
    // the group, which closes them.
    let grace = |at: tokio::time::Instant| (at + DRAIN_GRACE).min(deadline);
    let (mut out, mut err) = (None, None);
    let _ = tokio::time::timeout_at(grace(tokio::time::Instant::now()), async {
        out = Some((&mut stdout).await);
        err = Some((&mut stderr).await);
    })
    .await;
    kill_group(group);
    let until = grace(tokio::time::Instant::now());
    let out = match out {
        Some(done) => text(done),
        None => finish(stdout, until).await,
    };
    let err = match err {
        Some(done) => text(done),
        None => finish(stderr, until).await,
    };
    match status {
        Ok(status) => Ran::Exited {
            code: status.code(),
            signal: status.signal(),
            stdout: out,
            stderr: err,
        },
        Err(e) => Ran::SpawnFailed(format!("could not wait for {program}: {e}")),
    }
}

/// Reads a pipe to its end, keeping the first `MAX_OUTPUT` bytes.
fn collect<R: AsyncRead + Unpin + Send + 'static>(pipe: Option<R>) -> JoinHandle<Vec<u8>> {
    tokio::spawn(async move {
        let mut kept = Vec::new();
        let Some(mut pipe) = pipe else {
            return kept;
        };
        let mut buf = [0u8; 8192];
        loop {
            match pipe.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = MAX_OUTPUT.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
        kept
    })
}

/// What a collector read; nothing when its pipe is still held open by a process outside the
/// group (then it is abandoned).
async fn finish(mut collector: JoinHandle<Vec<u8>>, until: tokio::time::Instant) -> String {
    match tokio::time::timeout_at(until, &mut collector).await {
        Ok(done) => text(done),
        Err(_) => {
            collector.abort();
            String::new()
        }
    }
}

fn text(done: Result<Vec<u8>, tokio::task::JoinError>) -> String {
    done.map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

/// Kills a whole process group; a group that is already gone is fine.
fn kill_group(group: Option<i32>) {
    let Some(group) = group.filter(|g| *g > 1) else {
        return;
    };
    // SAFETY: killpg only sends a signal; `group` is the id of the group our child leads.
    unsafe {
        libc::killpg(group, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    async fn go(script: &str, stdin: &str, timeout: Duration) -> Ran {
        run(
            &sh(script),
            Path::new("/"),
            stdin.as_bytes().to_vec(),
            "pre_tool_use",
            timeout,
            &CancellationToken::new(),
        )
        .await
    }

    #[tokio::test]
    async fn stdin_env_exit_code_and_output() {
        let ran = go(
            "cat; echo \" $AIMON_HOOK_EVENT $PWD\"; echo oops >&2; exit 2",
            "{\"event\":1}",
            Duration::from_secs(10),
        )
        .await;
        let Ran::Exited {
            code,
            signal,
            stdout,
            stderr,
        } = ran
        else {
            panic!("exited: {ran:?}");
        };
        assert_eq!((code, signal), (Some(2), None));
        assert_eq!(stdout, "{\"event\":1} pre_tool_use /\n");
        assert_eq!(stderr, "oops\n");
    }

    /// Whether process `pid` is still alive (a zombie counts as gone).
    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        })
    }

    #[tokio::test]
    async fn the_timeout_kills_the_group() {
        let dir = tempfile::tempdir().expect("temp dir");
        let pids = dir.path().join("pids");
        let started = Instant::now();
        let ran = go(
            &format!("sleep 30 & echo $$ $! > {}; sleep 31", pids.display()),
            "",
            Duration::from_millis(500),
        )
        .await;
        assert!(matches!(ran, Ran::TimedOut), "{ran:?}");
        assert!(started.elapsed() < Duration::from_secs(10));
        let written = std::fs::read_to_string(&pids).expect("the hook wrote its pids");
        let pids: Vec<i32> = written
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        assert_eq!(pids.len(), 2, "{written}");
        let deadline = Instant::now() + Duration::from_secs(5);
        while pids.iter().any(|p| alive(*p)) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            !pids.iter().any(|p| alive(*p)),
            "the shell or its child survived: {pids:?}"
        );
    }

    #[tokio::test]
    async fn a_background_child_holding_stdout_does_not_hold_the_hook() {
        let started = Instant::now();
        let ran = go("echo '{}'; sleep 30 &", "", Duration::from_secs(20)).await;
        assert!(
            matches!(&ran, Ran::Exited { code: Some(0), stdout, .. } if stdout == "{}\n"),
            "{ran:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[tokio::test]
    async fn a_missing_program_and_a_cancel() {
        let ran = run(
            &["/nonexistent/hook".to_string()],
            Path::new("/"),
            Vec::new(),
            "x",
            Duration::from_secs(1),
            &CancellationToken::new(),
        )
        .await;
        assert!(
            matches!(&ran, Ran::SpawnFailed(why) if why.starts_with("could not start /nonexistent/hook")),
            "{ran:?}"
        );
        let cancel = CancellationToken::new();
        cancel.cancel();
        let ran = run(
            &sh("sleep 30"),
            Path::new("/"),
            Vec::new(),
            "x",
            Duration::from_secs(20),
            &cancel,
        )
        .await;
        assert!(matches!(ran, Ran::Cancelled), "{ran:?}");
    }
}
