//! A stdio server's process: spawned as a process-group leader with stderr piped into the ring,
//! watched for exit (docs/ARCHITECTURE.md §4 points 1–3), and killed as a whole group, together
//! with the descendants that left the group (`reaper.rs`), when it is closed and when it dies.
//!
//! Separate from the framing (`lines.rs`) because the process outlives no connection but the
//! framing does not care what is on the other end of the pipe.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use super::reaper::{self, Found, SERVER_MARK};
use super::stderr::StderrRing;
use crate::config::SandboxConfig;

/// How a server process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitInfo {
    /// It exited by itself with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
}

impl From<ExitStatus> for ExitInfo {
    fn from(status: ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => ExitInfo::Code(code),
            (None, Some(sig)) => ExitInfo::Signal(sig),
            (None, None) => ExitInfo::Code(-1),
        }
    }
}

impl fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitInfo::Code(code) => write!(f, "exit code {code}"),
            ExitInfo::Signal(sig) => write!(f, "killed by signal {sig} ({})", signal_name(*sig)),
        }
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

/// Why a server could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("command not found: {command}")]
    NotFound { command: String },
    #[error("cannot start {command}: {source}")]
    Other {
        command: String,
        #[source]
        source: io::Error,
    },
    /// Its sandbox is required and cannot be applied (or built) here.
    #[error("not started: {why}")]
    Sandbox { why: String },
}

/// What to run.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    /// What it may read, write and connect to (`src/sandbox.rs`); `None`: not sandboxed.
    pub sandbox: Option<SandboxConfig>,
}

/// A running (or ended) server process. Dropping it kills the whole group.
#[derive(Debug)]
pub struct ServerProcess {
    pid: i32,
    /// The value of `SERVER_MARK` in its environment (and its descendants').
    mark: String,
    exit: watch::Receiver<Option<ExitInfo>>,
    stderr_done: watch::Receiver<bool>,
}

/// Stderr lines read from one server per `STDERR_WINDOW` at most (20,000 a second: far more
/// than a person or the Details tail can take in; a flood past it is slowed down).
const STDERR_BURST: usize = 2_000;
const STDERR_WINDOW: Duration = Duration::from_millis(100);

/// The pipes of a freshly spawned server.
pub struct Pipes {
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    /// The sandbox it runs under, in words (`None`: none configured).
    pub sandbox: Option<String>,
}

impl ServerProcess {
    /// Starts the server as a process-group leader, marked (`SERVER_MARK`) so that its
    /// descendants can be found wherever they go; stderr lines go to `ring` and `on_line`.
    pub fn spawn(
        spec: &SpawnSpec,
        ring: Arc<StderrRing>,
        on_line: Arc<dyn Fn(String) + Send + Sync>,
    ) -> Result<(ServerProcess, Pipes), SpawnError> {
        reaper::enable();
        // Orphans that exited since the last sweep go now.
        reaper::sweep();
        let mark = crate::child_mark::next();
        let mut cmd = Command::new(&spec.command);
        cmd.args(&spec.args)
            .envs(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env(SERVER_MARK, &mark)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(false);
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        let sandbox = match &spec.sandbox {
            None => None,
            Some(config) => {
                let prepared = crate::sandbox::prepare(config, Some(Path::new(&spec.command)))
                    .map_err(|why| SpawnError::Sandbox { why })?;
                let summary = prepared.summary.clone();
                prepared.apply(&mut cmd);
                Some(summary)
            }
        };
        let mut child = cmd.spawn().map_err(|source| {
            if source.kind() == io::ErrorKind::NotFound
                && spec.cwd.as_ref().is_none_or(|cwd| cwd.is_dir())
            {
                SpawnError::NotFound {
                    command: spec.command.clone(),
                }
            } else {
                SpawnError::Other {
                    command: spec.command.clone(),
                    source,
                }
            }
        })?;
        let pid = child.id().map(|p| p as i32).unwrap_or(0);
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            kill_group(pid, libc::SIGKILL);
            return Err(SpawnError::Other {
                command: spec.command.clone(),
                source: io::Error::other("pipes were not created"),
            });
        };

        reaper::leader_started(pid);
        let (stderr_tx, stderr_done) = watch::channel(false);
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr);
            let mut buf = Vec::new();
            // At most `STDERR_BURST` lines each `STDERR_WINDOW`: a server flooding its stderr
            // waits on its pipe (as one flooding stdout waits for room), instead of the
            // console spending a core on reading what nobody can read.
            let mut window = (tokio::time::Instant::now(), 0usize);
            loop {
                if window.1 == STDERR_BURST {
                    tokio::time::sleep_until(window.0 + STDERR_WINDOW).await;
                    window = (tokio::time::Instant::now(), 0);
                } else if window.0.elapsed() >= STDERR_WINDOW {
                    window = (tokio::time::Instant::now(), 0);
                }
                window.1 += 1;
                buf.clear();
                // Bounded: a line longer than 64 KiB is split rather than held whole.
                match (&mut reader)
                    .take(64 * 1024)
                    .read_until(b'\n', &mut buf)
                    .await
                {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = ring.push(&String::from_utf8_lossy(&buf));
                        on_line(line);
                    }
                }
            }
            let _ = stderr_tx.send(true);
        });

        let (exit_tx, exit) = watch::channel(None);
        let marked = mark.clone();
        tokio::spawn(async move {
            let info = match child.wait().await {
                Ok(status) => ExitInfo::from(status),
                Err(_) => ExitInfo::Code(-1),
            };
            reaper::leader_ended(pid);
            // The leader is gone: whatever it started in its group goes too
            // (docs/ARCHITECTURE.md §4.2), and what left the group, now orphaned to the console,
            // by its mark.
            kill_group(pid, libc::SIGKILL);
            let _ = exit_tx.send(Some(info));
            reaper::end_orphans_of(marked).await;
        });

        Ok((
            ServerProcess {
                pid,
                mark,
                exit,
                stderr_done,
            },
            Pipes {
                stdin,
                stdout,
                sandbox,
            },
        ))
    }

    /// Its descendants, wherever they went (see `reaper::descendants`): taken before it is
    /// asked to exit, while its tree still hangs together.
    pub fn descendants(&self) -> Vec<Found> {
        let (leader, mark) = self.tree();
        reaper::descendants(leader, mark)
    }

    /// What [`descendants`](Self::descendants) walks from: the leader while it has not been
    /// reaped (after, its pid may be someone else's), and the mark its tree carries.
    pub fn tree(&self) -> (Option<i32>, &str) {
        (self.exit_info().is_none().then_some(self.pid), &self.mark)
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// How the process ended, if it has.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        *self.exit.borrow()
    }

    /// A receiver that changes once, when the process exits.
    pub fn exit_watch(&self) -> watch::Receiver<Option<ExitInfo>> {
        self.exit.clone()
    }

    /// Waits up to `timeout` for the process to exit.
    pub async fn wait_exit(&self, timeout: Duration) -> Option<ExitInfo> {
        let mut rx = self.exit.clone();
        let _ = tokio::time::timeout(timeout, rx.wait_for(Option::is_some)).await;
        self.exit_info()
    }

    /// Waits up to `timeout` for stderr to reach end of file (so its tail is complete).
    pub async fn wait_stderr_drained(&self, timeout: Duration) {
        let mut rx = self.stderr_done.clone();
        let _ = tokio::time::timeout(timeout, rx.wait_for(|done| *done)).await;
    }

    /// Waits up to `grace` for it to exit, then asks its group to end (SIGTERM, then SIGKILL);
    /// its escaped descendants are the caller's (`McpClient::close` does both).
    pub async fn end_group(&self, grace: Duration) -> Option<ExitInfo> {
        if let Some(info) = self.wait_exit(grace).await {
            return Some(info);
        }
        kill_group(self.pid, libc::SIGTERM);
        if let Some(info) = self.wait_exit(grace).await {
            return Some(info);
        }
        kill_group(self.pid, libc::SIGKILL);
        self.wait_exit(Duration::from_secs(2)).await
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if self.exit_info().is_none() {
            let escaped = self.descendants();
            kill_group(self.pid, libc::SIGKILL);
            // Reaped by the exit watcher, whose sweep follows the leader's exit.
            reaper::kill(&escaped);
        }
    }
}

/// Sends `sig` to the whole process group led by `pid`.
pub fn kill_group(pid: i32, sig: i32) {
    if pid > 0 {
        // SAFETY: killpg has no memory-safety preconditions; a stale group only yields ESRCH.
        unsafe {
            libc::killpg(pid, sig);
        }
    }
}
