//! The start of a stdio server: spawn it (its own process group, stderr captured), then the
//! handshake over its stdin/stdout, then the tools-listed phase shared with HTTP servers.

use std::sync::{Arc, Mutex};

use super::starter::{list_tools, StartOutcome, Starter, EXIT_SETTLE};
use crate::mcp::client::{DefaultMcpClient, HandshakeError};
use crate::mcp::events::{FailureClass, McpEvent, StartPhase};
use crate::mcp::notify::NotificationTap;
use crate::mcp::transport::lines::{LineContext, LineTransport, StdoutIssues};
use crate::mcp::transport::process::{ServerProcess, SpawnError, SpawnSpec};

/// Starts a stdio server; its report says the sandbox it runs under, if it has one.
pub(super) async fn start_stdio(starter: &Starter<'_>, tap: NotificationTap) -> StartOutcome {
    let mut sandbox = None;
    let mut outcome = start(starter, tap, &mut sandbox).await;
    let (StartOutcome::Ready { report, .. } | StartOutcome::Failed(report)) = &mut outcome;
    report.sandbox = sandbox;
    outcome
}

async fn start(
    starter: &Starter<'_>,
    tap: NotificationTap,
    sandbox: &mut Option<String>,
) -> StartOutcome {
    let config = starter.config;
    // Phase 1: spawn.
    starter.enter(StartPhase::Spawn);
    let Some(command) = config.command.clone() else {
        return starter
            .fail(
                FailureClass::SpawnFailed,
                StartPhase::Spawn,
                "no command configured".into(),
                None,
            )
            .await;
    };
    let spec = SpawnSpec {
        command,
        args: config.args.clone(),
        env: config
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        cwd: config.cwd.clone(),
        sandbox: config.sandbox.clone(),
    };
    let server = config.name.clone();
    let sink = starter.sink.clone();
    let on_line: Arc<dyn Fn(String) + Send + Sync> = Arc::new(move |line| {
        sink(McpEvent::Stderr {
            server: server.clone(),
            line,
        })
    });
    let (process, pipes) = match ServerProcess::spawn(&spec, starter.ring.clone(), on_line) {
        Ok(spawned) => spawned,
        Err(err) => {
            let class = match &err {
                SpawnError::NotFound { .. } => FailureClass::CommandNotFound,
                SpawnError::Other { .. } | SpawnError::Sandbox { .. } => FailureClass::SpawnFailed,
            };
            return starter
                .fail(class, StartPhase::Spawn, err.to_string(), None)
                .await;
        }
    };
    *sandbox = pipes.sandbox.clone();
    starter.finish(StartPhase::Spawn);

    // Phase 2: handshake.
    starter.enter(StartPhase::Handshake);
    let issues = Arc::new(Mutex::new(StdoutIssues::default()));
    let mut exit = process.exit_watch();
    let closed = async move {
        let _ = exit.wait_for(Option::is_some).await;
    };
    let transport = LineTransport::new(
        pipes.stdout,
        pipes.stdin,
        closed,
        LineContext {
            server: config.name.clone(),
            tap,
            issues: issues.clone(),
        },
    );
    let direct = transport.direct();
    let client = match DefaultMcpClient::handshake(
        starter.links.clone(),
        transport,
        Some(process),
        config.request_timeout,
        issues.clone(),
        starter.options,
    )
    .await
    {
        Ok(client) => client.with_direct(direct),
        Err((err, process)) => {
            let process = process.as_ref();
            // A timed-out or refused handshake closed the server's stdin on the way out, so an
            // exit seen now is our doing: only a lost connection waits to see whether the
            // server died (a server that answered was alive; its exit status is still shown).
            let exited = match (&err, process) {
                (HandshakeError::Closed { .. }, Some(p)) => p.wait_exit(EXIT_SETTLE).await,
                (
                    HandshakeError::Timeout(_)
                    | HandshakeError::Failed { .. }
                    | HandshakeError::Unreadable(_),
                    _,
                )
                | (_, None) => None,
            };
            let garbage = issues.lock().unwrap_or_else(|e| e.into_inner()).warnings();
            let (class, mut message) = match (exited, err) {
                (Some(info), _) => (
                    FailureClass::Exited,
                    format!("the server exited during the handshake ({info})"),
                ),
                (None, HandshakeError::Timeout(d)) => (
                    FailureClass::HandshakeTimeout,
                    format!(
                        "no answer to the handshake within request_timeout ({})",
                        crate::text::fmt_duration(d)
                    ),
                ),
                (
                    None,
                    HandshakeError::Closed { message, .. } | HandshakeError::Failed { message, .. },
                ) => (FailureClass::ProtocolError, message),
                (None, HandshakeError::Unreadable(why)) => (FailureClass::AnswerUnreadable, why),
            };
            if !garbage.is_empty() {
                message = format!("{message}; {}", garbage.join("; "));
            }
            return starter
                .fail(class, StartPhase::Handshake, message, process)
                .await;
        }
    };
    starter.finish(StartPhase::Handshake);
    list_tools(starter, client).await
}
