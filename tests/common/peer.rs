//! A third-party peer process a test starts itself (the real model server): its stdout and
//! stderr go to a file, not /dev/null, so that when the peer dies during a test the failure
//! names it, its exit status or signal and the last lines it wrote, instead of a model error two
//! layers up.

use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};

use aimon_console::mcp::transport::process::ExitInfo;

/// How many lines of the peer's stderr a failure quotes.
const TAIL_LINES: usize = 20;

/// A running peer; killed and reaped on drop. If the test panics after the peer died, the
/// failure says so (see [`Peer::guard`] and the `Drop` impl).
pub struct Peer {
    name: String,
    child: Child,
    log: PathBuf,
    _dir: tempfile::TempDir,
    exited: Option<ExitStatus>,
}

impl Peer {
    /// Starts `cmd` as the peer called `name`, its stdout and stderr into one log file.
    pub fn spawn(name: &str, cmd: &mut Command) -> Peer {
        let dir = tempfile::tempdir().expect("peer log dir");
        let log = dir.path().join("output.log");
        let file = std::fs::File::create(&log).expect("peer log file");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::from(file.try_clone().expect("peer log file")))
            .stderr(Stdio::from(file))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the peer {name}: {e}"));
        Peer {
            name: name.to_string(),
            child,
            log,
            _dir: dir,
            exited: None,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `Some(why)` once the peer has exited by itself: its name, pid, status and stderr tail.
    pub fn death(&mut self) -> Option<String> {
        if self.exited.is_none() {
            self.exited = self.child.try_wait().ok().flatten();
        }
        let status = self.exited?;
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n    ");
        Some(format!(
            "the peer {} (pid {}) died during the test: {}; the last lines of its output:\n    {}",
            self.name,
            self.child.id(),
            describe(status),
            if tail.is_empty() { "(none)" } else { &tail }
        ))
    }

    /// Runs `body`; if it panics and the peer has died meanwhile, the panic's message gains
    /// the peer's death (name, signal or status, stderr tail) so the failure says what broke.
    pub fn guard<T>(&mut self, body: impl FnOnce() -> T) -> T {
        match panic::catch_unwind(AssertUnwindSafe(body)) {
            Ok(value) => value,
            Err(payload) => match self.death() {
                Some(death) => panic!("{}\n\n{death}", message(&*payload)),
                None => panic::resume_unwind(payload),
            },
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // A panic outside `guard` (an async test, a helper) still names a dead peer.
        if std::thread::panicking() {
            if let Some(death) = self.death() {
                eprintln!("\n{death}");
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A panic payload as text.
pub fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(a panic without a message)".into())
}

/// "exit code 1", or "killed by signal 9 (SIGKILL)": as the console says it of a server.
fn describe(status: ExitStatus) -> String {
    ExitInfo::from(status).to_string()
}
