//! Model endpoints the console starts itself (a profile's `command:`, like the demo model of
//! `config.example.yaml`): spawn it as a process-group leader, read its base URL from the first
//! line of its stdout, and kill the whole group when it is dropped, like every MCP server.
//!
//! Its own small spawner rather than the MCP layer's: the agent layer may not import `mcp`, and
//! an endpoint needs none of the MCP framing, only a first line, a clean kill and the mark every
//! process the console starts carries (`child_mark.rs`).

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};

use super::failure::{ModelError, ModelFailureClass, Secrets};
use crate::config::{ModelEndpoint, ModelProfile};

/// How much of its stderr is kept for a failure message.
const STDERR_TAIL: usize = 2048;

/// How long an endpoint that closed its stdout gets to exit, and then to close its stderr.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// A running endpoint: the base URL to use, and the process the console started for it (none
/// for a `base_url` profile). Dropping it kills that process and its group.
#[derive(Debug)]
pub struct Endpoint {
    pub base_url: String,
    process: Option<Child>,
}

impl Endpoint {
    /// The process id of the started endpoint, if the console started one.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(Child::id)
    }

    /// Whether the process started for it has ended (it crashed, or was killed); never for an
    /// endpoint the console did not start.
    pub fn ended(&self) -> bool {
        let Some(child) = &self.process else {
            return false;
        };
        // No id: the child was waited for, so it has ended.
        let Some(pid) = child.id() else {
            return true;
        };
        // SAFETY: a zeroed `siginfo_t` is a valid value; `waitid` writes only into it, and with
        // WNOWAIT leaves an ended child to be reaped where it would be.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        let asked = unsafe { libc::waitid(libc::P_PID, pid, &mut info, flags) };
        // An error is no such child left to wait for: ended too.
        // SAFETY: `si_pid` reads the field `waitid` filled (0 while the child runs).
        asked != 0 || unsafe { info.si_pid() } != 0
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(child) = &mut self.process {
            if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
                // SAFETY: killpg has no memory effects; the group is the child's own (it was
                // made its leader at spawn).
                unsafe {
                    libc::killpg(pid, libc::SIGKILL);
                }
            }
            let _ = child.start_kill();
        }
    }
}

/// Makes the endpoint end with this process even when it is killed outright (SIGKILL), which
/// no `Drop` sees: an endpoint is an HTTP server on a null stdin, which no end of input stops.
/// The kernel sends the endpoint SIGKILL when the thread that started it ends; endpoints are
/// started on the async runtime's thread (the main thread: `main.rs` runs one thread), which
/// ends with the process. A process the endpoint started in turn is not covered: its group is
/// killed on a clean exit, and a daemon ends what a killed one left (`child_mark.rs`).
fn end_with_this_process(cmd: &mut Command) {
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // async-signal-safe functions (prctl, getppid, _exit).
    let parent = std::process::id();
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // This process died before the request was made: the signal will never come.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// The endpoint of `profile`: its `base_url`, or its `command` started and asked for one
/// (within the profile's `request_timeout`).
pub async fn start(profile: &ModelProfile) -> Result<Endpoint, ModelError> {
    let (command, args, env, cwd) = match &profile.endpoint {
        ModelEndpoint::Url(url) => {
            return Ok(Endpoint {
                base_url: url.clone(),
                process: None,
            })
        }
        ModelEndpoint::Command {
            command,
            args,
            env,
            cwd,
        } => (command, args, env, cwd),
    };
    let failed = |message: String| ModelError::new(ModelFailureClass::EndpointFailed, message);
    let mut cmd = Command::new(command);
    cmd.args(args)
        .envs(env)
        // Marked as the MCP servers are: a daemon killed with its endpoint running leaves it to
        // the next daemon to end (`child_mark.rs`).
        .env(crate::child_mark::NAME, crate::child_mark::next())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    end_with_this_process(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| {
        failed(format!(
            "cannot start the model endpoint {}: {e}",
            crate::text::sanitize_line(command, 200)
        ))
    })?;
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    // Ends when its stderr does: waited for (briefly) when the endpoint exits, so that what it
    // said before it exited is in the message.
    let mut stderr_read = None;
    if let Some(mut stderr) = child.stderr.take() {
        let tail = tail.clone();
        stderr_read = Some(tokio::spawn(async move {
            let mut buf = [0u8; 1024];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                tail.extend(&buf[..n]);
                while tail.len() > STDERR_TAIL {
                    tail.pop_front();
                }
            }
        }));
    }
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| failed("the model endpoint has no stdout".into()))?;
    let mut endpoint = Endpoint {
        base_url: String::new(),
        process: Some(child),
    };
    let mut lines = BufReader::new(stdout);
    let mut first = String::new();
    let read = tokio::time::timeout(
        profile.request_timeout,
        (&mut lines).take(64 * 1024).read_line(&mut first),
    )
    .await;
    let secrets = Secrets::of(profile);
    let stderr = |tail: &Arc<Mutex<VecDeque<u8>>>| {
        let bytes: Vec<u8> = tail
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .copied()
            .collect();
        if bytes.is_empty() {
            String::new()
        } else {
            format!("; its stderr: {}", secrets.quote(&bytes, 300))
        }
    };
    match read {
        Err(_) => {
            return Err(failed(format!(
                "the model endpoint printed no base URL within request_timeout ({}){}",
                crate::text::fmt_duration(profile.request_timeout),
                stderr(&tail)
            )))
        }
        Ok(Err(e)) => {
            return Err(failed(format!(
                "cannot read the model endpoint's stdout: {e}"
            )))
        }
        Ok(Ok(0)) => {
            // Its stdout closed: wait (briefly) for it to exit and for the rest of its stderr
            // (a child it left behind may hold stderr open: the wait is bounded).
            let status = match &mut endpoint.process {
                Some(child) => tokio::time::timeout(EXIT_GRACE, child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok),
                None => None,
            };
            if let Some(read) = stderr_read {
                let _ = tokio::time::timeout(EXIT_GRACE, read).await;
            }
            let how = status.map(|s| format!(" ({s})")).unwrap_or_default();
            return Err(failed(format!(
                "the model endpoint exited before printing its base URL{how}{}",
                stderr(&tail)
            )));
        }
        Ok(Ok(_)) => {}
    }
    let line = first.trim();
    let url = line.strip_prefix("listening on ").unwrap_or(line).trim();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(failed(format!(
            "the model endpoint's first line is not a base URL: {}",
            secrets.quote(line.as_bytes(), 200)
        )));
    }
    endpoint.base_url = url.to_string();
    // Keep its stdout drained, so it never blocks on a full pipe.
    tokio::spawn(async move {
        let mut sink = tokio::io::sink();
        let _ = tokio::io::copy(&mut lines, &mut sink).await;
    });
    Ok(endpoint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, env: &[(&str, &str)]) -> ModelProfile {
        let mut profile = ModelProfile::url("p", "http://unused/v1", "m");
        profile.endpoint = ModelEndpoint::Command {
            command: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            cwd: None,
        };
        profile.request_timeout = Duration::from_secs(5);
        profile
    }

    #[tokio::test]
    async fn an_endpoint_that_dies_at_once_has_its_stderr_quoted_secrets_scrubbed() {
        let profile = sh(
            "echo starting up >&2; echo \"key $MODEL_API_KEY refused\" >&2; exit 3",
            &[("MODEL_API_KEY", "sk-endpoint-0123456789")],
        );
        // The race lost the stderr most of the time: every try must have it.
        for _ in 0..4 {
            let error = start(&profile).await.expect_err("it exits");
            assert_eq!(error.class, ModelFailureClass::EndpointFailed);
            assert!(
                error.message.contains("exit status: 3")
                    && error.message.contains("starting up")
                    && error.message.contains("key <redacted> refused"),
                "{error}"
            );
            assert!(!error.message.contains("sk-endpoint"), "{error}");
        }
    }

    #[tokio::test]
    async fn a_first_line_that_is_not_a_url_is_quoted_secrets_scrubbed() {
        let profile = sh(
            "echo \"key=$MODEL_API_KEY\"; sleep 5",
            &[("MODEL_API_KEY", "sk-endpoint-0123456789")],
        );
        let error = start(&profile).await.expect_err("not a URL");
        assert_eq!(error.class, ModelFailureClass::EndpointFailed);
        assert!(
            error.message.contains("first line is not a base URL")
                && error.message.contains("key=<redacted>"),
            "{error}"
        );
        assert!(!error.message.contains("sk-endpoint"), "{error}");
    }
}
