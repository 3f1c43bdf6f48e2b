//! `bash`: runs a shell command in its own process group, bounded in time and output.
//!
//! The command's whole process group is killed on timeout or cancel, and any background process
//! it left behind is killed when it exits: nothing it started outlives the call.

use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::task::JoinHandle;

use crate::config::SandboxConfig;
use crate::tool::{
    DestructiveBehavior, SideEffectLevel, Tool, ToolContext, ToolDescriptor, ToolInput, ToolResult,
};

use super::check_input;

/// Timeout when the caller gives none.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;
/// The longest timeout a caller may ask for (10 minutes).
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// At most this many bytes of output are kept (stdout and stderr together).
pub const MAX_OUTPUT_BYTES: usize = 128 * 1024;
/// After the shell exits, how long its pipes may stay open (a background child holding them).
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// The `bash` tool: mutating and destructive.
pub struct BashTool {
    descriptor: ToolDescriptor,
    /// What its commands may read, write and connect to (`policy.bash_sandbox`); `None`:
    /// everything the console may.
    sandbox: Option<SandboxConfig>,
}

impl BashTool {
    pub fn new(sandbox: Option<SandboxConfig>) -> Self {
        let confined = match &sandbox {
            Some(config) => format!(" Sandboxed: {}.", crate::sandbox::describe(config)),
            None => String::new(),
        };
        BashTool {
            sandbox,
            descriptor: ToolDescriptor {
                name: "bash".into(),
                description: format!(
                    "Run a command with `bash -c` (stdin is empty). Returns stdout and stderr \
                     (up to {} KiB) and the exit status. Times out after `timeout_ms` \
                     (default {} s, at most {} min), killing everything the command started.\
                     {confined}",
                    MAX_OUTPUT_BYTES / 1024,
                    DEFAULT_TIMEOUT_MS / 1000,
                    MAX_TIMEOUT_MS / 60_000
                ),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "command": {"type": "string", "minLength": 1,
                                    "description": "The shell command to run."},
                        "timeout_ms": {"type": "integer", "minimum": 1,
                                       "maximum": MAX_TIMEOUT_MS,
                                       "description": "Kill the command after this long."}
                    },
                    "required": ["command"],
                    "additionalProperties": false
                })
                .into(),
                side_effect: SideEffectLevel::Mutating,
                destructive: DestructiveBehavior::Destructive,
                provenance: "local tool: runs shell commands".into(),
                flags: Vec::new(),
                pin: None,
                origin: None,
            },
        }
    }
}

#[async_trait::async_trait]
impl Tool for BashTool {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }

    async fn execute(&self, input: ToolInput, ctx: ToolContext) -> ToolResult {
        if let Err(message) = check_input("bash", &self.descriptor.input_schema, &input) {
            return ToolResult::error(message);
        }
        let Some(command) = input.get_str("command") else {
            return ToolResult::error("invalid arguments for bash: command is required");
        };
        let timeout_ms = input
            .0
            .get("timeout_ms")
            .and_then(|v| v.as_u64())
            .unwrap_or(DEFAULT_TIMEOUT_MS)
            .clamp(1, MAX_TIMEOUT_MS);
        run(
            command,
            Duration::from_millis(timeout_ms),
            self.sandbox.as_ref(),
            ctx,
        )
        .await
    }
}

/// How the shell's run ended.
enum Ending {
    Exited(ExitStatus),
    WaitFailed(std::io::Error),
    TimedOut,
    Cancelled,
}

async fn run(
    command: &str,
    timeout: Duration,
    sandbox: Option<&SandboxConfig>,
    ctx: ToolContext,
) -> ToolResult {
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut unconfined = None;
    if let Some(config) = sandbox {
        match crate::sandbox::prepare(config, Some(std::path::Path::new("bash"))) {
            Ok(prepared) => {
                if prepared.summary.starts_with("NOT") {
                    unconfined = Some(prepared.summary.clone());
                }
                prepared.apply(&mut cmd);
            }
            Err(why) => return ToolResult::error(format!("bash: not run: {why}")),
        }
    }
    if let Some(why) = &unconfined {
        tracing::warn!(%why, "bash runs without its sandbox");
    }
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return ToolResult::error(format!("bash: could not start bash: {e}")),
    };
    // The child leads its own group, so its pid is the group id.
    let group = child.id().and_then(|pid| i32::try_from(pid).ok());
    let captured = Arc::new(Mutex::new(Output::default()));
    let mut collector = spawn_collector(child.stdout.take(), child.stderr.take(), captured.clone());

    let ending = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => Ending::Exited(status),
            Err(e) => Ending::WaitFailed(e),
        },
        _ = tokio::time::sleep(timeout) => Ending::TimedOut,
        _ = ctx.cancel.cancelled() => Ending::Cancelled,
    };

    let finished = match ending {
        Ending::Exited(_) | Ending::WaitFailed(_) => {
            // Give the pipes a moment to drain, then kill whatever the command left running.
            let drained = finish(&mut collector, DRAIN_GRACE).await;
            kill_group(group);
            drained || finish(&mut collector, DRAIN_GRACE).await
        }
        Ending::TimedOut | Ending::Cancelled => {
            kill_group(group);
            let _ = child.start_kill();
            let _ = child.wait().await;
            finish(&mut collector, DRAIN_GRACE).await
        }
    };
    if !finished {
        // A process outside the group still holds a pipe: keep what arrived so far.
        collector.abort();
    }
    let output = std::mem::take(&mut *lock(&captured));
    let output = output.render();

    let (status_line, is_error) = match &ending {
        Ending::Exited(status) => describe_status(*status),
        Ending::WaitFailed(e) => (format!("could not wait for bash: {e}"), true),
        Ending::TimedOut => (
            format!("killed after timeout ({} ms)", timeout.as_millis()),
            true,
        ),
        Ending::Cancelled => ("killed: cancelled".to_string(), true),
    };
    let mut text = output;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&status_line);
    if is_error {
        ToolResult::error(text)
    } else {
        ToolResult::ok(text)
    }
}

fn describe_status(status: ExitStatus) -> (String, bool) {
    match (status.code(), status.signal()) {
        (Some(code), _) => (format!("exit status {code}"), code != 0),
        (None, Some(signal)) => (format!("killed by signal {signal}"), true),
        (None, None) => ("exited (status unknown)".to_string(), true),
    }
}

/// Kills a whole process group; a group that is already gone is fine.
fn kill_group(group: Option<i32>) {
    let Some(group) = group else {
        return;
    };
    if group <= 1 {
        return;
    }
    // SAFETY: killpg only sends a signal; `group` is the id of the group our child leads.
    unsafe {
        libc::killpg(group, libc::SIGKILL);
    }
}

/// Waits up to `grace` for the collector to finish; true when it did.
async fn finish(collector: &mut JoinHandle<()>, grace: Duration) -> bool {
    if collector.is_finished() {
        return true;
    }
    tokio::time::timeout(grace, collector).await.is_ok()
}

fn lock(captured: &Mutex<Output>) -> std::sync::MutexGuard<'_, Output> {
    captured
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Captured output: the first `MAX_OUTPUT_BYTES` bytes, in arrival order, and how much was dropped.
#[derive(Default)]
struct Output {
    bytes: Vec<u8>,
    dropped: usize,
}

impl Output {
    fn push(&mut self, chunk: &[u8]) {
        let room = MAX_OUTPUT_BYTES.saturating_sub(self.bytes.len());
        let kept = chunk.len().min(room);
        self.bytes.extend_from_slice(&chunk[..kept]);
        self.dropped += chunk.len() - kept;
    }

    fn render(self) -> String {
        let mut text = String::from_utf8_lossy(&self.bytes).into_owned();
        if self.dropped > 0 {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[output truncated: {} more bytes not shown]",
                self.dropped
            ));
        }
        text
    }
}

/// Reads stdout and stderr together, interleaved as they arrive, until both close.
fn spawn_collector<O, E>(
    stdout: Option<O>,
    stderr: Option<E>,
    captured: Arc<Mutex<Output>>,
) -> JoinHandle<()>
where
    O: AsyncRead + Unpin + Send + 'static,
    E: AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut stdout = stdout;
        let mut stderr = stderr;
        let mut out_buf = vec![0u8; 8192];
        let mut err_buf = vec![0u8; 8192];
        loop {
            let (out_done, err_done) = (stdout.is_none(), stderr.is_none());
            if out_done && err_done {
                break;
            }
            tokio::select! {
                read = read_some(&mut stdout, &mut out_buf), if !out_done => match read {
                    Some(n) => lock(&captured).push(&out_buf[..n]),
                    None => stdout = None,
                },
                read = read_some(&mut stderr, &mut err_buf), if !err_done => match read {
                    Some(n) => lock(&captured).push(&err_buf[..n]),
                    None => stderr = None,
                },
            }
        }
    })
}

/// One read; `None` at end of stream or on error.
async fn read_some<R: AsyncRead + Unpin>(reader: &mut Option<R>, buf: &mut [u8]) -> Option<usize> {
    let r = reader.as_mut()?;
    match r.read(buf).await {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    async fn run_tool(args: serde_json::Value, ctx: ToolContext) -> ToolResult {
        let input = ToolInput::from_value(args).unwrap_or_default();
        BashTool::new(None).execute(input, ctx).await
    }

    #[tokio::test]
    async fn captures_stdout_and_stderr_and_exit_status() {
        let r = run_tool(
            json!({"command": "echo out; echo err >&2"}),
            ToolContext::default(),
        )
        .await;
        assert!(!r.is_error, "{}", r.text);
        assert!(r.text.contains("out\n"));
        assert!(r.text.contains("err\n"));
        assert!(r.text.ends_with("exit status 0"), "{}", r.text);
    }

    #[tokio::test]
    async fn non_zero_exit_is_an_error() {
        let r = run_tool(
            json!({"command": "echo nope; exit 3"}),
            ToolContext::default(),
        )
        .await;
        assert!(r.is_error);
        assert_eq!(r.text, "nope\nexit status 3");
    }

    #[tokio::test]
    async fn stdin_is_empty() {
        let r = run_tool(json!({"command": "cat; echo done"}), ToolContext::default()).await;
        assert_eq!(r.text, "done\nexit status 0");
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let started = Instant::now();
        let r = run_tool(
            json!({"command": "sleep 30 & sleep 30; echo never", "timeout_ms": 300}),
            ToolContext::default(),
        )
        .await;
        assert!(r.is_error);
        assert!(
            r.text.ends_with("killed after timeout (300 ms)"),
            "{}",
            r.text
        );
        assert!(!r.text.contains("never"));
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[tokio::test]
    async fn background_children_do_not_hold_the_call_open() {
        let started = Instant::now();
        let r = run_tool(
            json!({"command": "sleep 30 & echo started"}),
            ToolContext::default(),
        )
        .await;
        assert_eq!(r.text, "started\nexit status 0");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[tokio::test]
    async fn cancel_kills_the_command() {
        let ctx = ToolContext::default();
        let cancel = ctx.cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            cancel.cancel();
        });
        let started = Instant::now();
        let r = run_tool(json!({"command": "sleep 30"}), ctx).await;
        assert!(r.is_error);
        assert!(r.text.ends_with("killed: cancelled"), "{}", r.text);
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[tokio::test]
    async fn output_is_bounded() {
        let r = run_tool(
            json!({"command": "head -c 300000 /dev/zero | tr '\\0' x"}),
            ToolContext::default(),
        )
        .await;
        assert!(
            !r.is_error,
            "{}",
            &r.text[r.text.len().saturating_sub(200)..]
        );
        assert!(r.text.len() < MAX_OUTPUT_BYTES + 200);
        assert!(r
            .text
            .contains("[output truncated: 168928 more bytes not shown]"));
    }

    #[tokio::test]
    async fn input_is_validated_against_the_schema() {
        let r = run_tool(
            json!({"command": "true", "cwd": "/"}),
            ToolContext::default(),
        )
        .await;
        assert_eq!(
            r.text,
            "invalid arguments for bash: /cwd: unexpected property"
        );
        let r = run_tool(
            json!({"command": "true", "timeout_ms": 600_001}),
            ToolContext::default(),
        )
        .await;
        assert!(
            r.text.contains("/timeout_ms: must be at most 600000"),
            "{}",
            r.text
        );
        let r = run_tool(json!({"command": 5}), ToolContext::default()).await;
        assert!(r.text.contains("/command: expected a string, got a number"));
    }

    #[test]
    fn traits_are_mutating_and_destructive() {
        let tool = BashTool::new(None);
        let d = tool.descriptor();
        assert_eq!(d.side_effect, SideEffectLevel::Mutating);
        assert_eq!(d.destructive, DestructiveBehavior::Destructive);
        assert_eq!(d.provenance, "local tool: runs shell commands");
    }
}
