//! `aimon-console watch [--json] [--exit-on-stdin-eof]`: start every server and print runtime
//! events as they happen (one JSON object a line with `--json`) until Ctrl-C, SIGTERM or
//! SIGHUP, or until stdout closes. stdin is not read unless `--exit-on-stdin-eof` asks to stop when it
//! ends: under `nohup`, in CI and from `< /dev/null` stdin is at its end from the start, and a
//! watcher that stopped at once there would look like one that saw nothing. For scripts and
//! diagnosis without the console.
//!
//! There are no calls here, so every moment is between turns: a tools list change is taken in
//! (a turn boundary) as soon as it is announced, and its diff printed.

use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;

use tokio::sync::oneshot;

use super::asks::AskArgs;
use super::events::write_event;
use super::output;
use crate::approval::ApprovalDecision;
use crate::config::Config;
use crate::runtime::ListKind;
use crate::runtime::{AgentRuntime, AgentRuntimeFactory, McpEvent, RuntimeEvent};
use crate::telemetry;

/// How long a stop waits for a start-up still finishing before abandoning it.
const FINISH_START: std::time::Duration = std::time::Duration::from_secs(1);

#[derive(clap::Args, Debug, Clone, Default)]
pub struct WatchArgs {
    /// One JSON object a line (docs/commands.md "JSON shapes").
    #[arg(long)]
    pub json: bool,
    /// Also stop when stdin reaches its end (a driving script closing the pipe).
    #[arg(long)]
    pub exit_on_stdin_eof: bool,
    #[command(flatten)]
    pub asks: AskArgs,
}

pub async fn run(config: Config, args: WatchArgs) -> ExitCode {
    let (events, mut stream) = AgentRuntimeFactory::events();
    let mut creating = tokio::spawn(async move {
        AgentRuntimeFactory::create(&config, telemetry::options(&config), events).await
    });
    let stop = stop_requested(args.exit_on_stdin_eof);
    tokio::pin!(stop);
    let mut runtime: Option<Arc<AgentRuntime>> = None;
    let mut started = false;
    let mut out = std::io::stdout();
    let mut stdout_open = true;
    let code = loop {
        tokio::select! {
            biased;
            () = &mut stop => break ExitCode::SUCCESS,
            created = &mut creating, if !started => {
                started = true;
                match created {
                    Ok(Ok(rt)) => {
                        let rt = Arc::new(rt);
                        // A change announced after start-up's own listing is taken in now.
                        boundary(&rt);
                        runtime = Some(rt);
                    }
                    Ok(Err(e)) => {
                        output::error_line(&format!("error: {e}"));
                        break ExitCode::from(1);
                    }
                    Err(e) => {
                        output::error_line(&format!("error: start-up failed: {e}"));
                        break ExitCode::from(1);
                    }
                }
            }
            event = stream.recv() => {
                let Some(event) = event else { break ExitCode::SUCCESS };
                if write_event(&mut out, &event, args.json).is_err() {
                    stdout_open = false;
                    break ExitCode::SUCCESS;
                }
                if let RuntimeEvent::ListChanged { list: ListKind::Tools, .. } = &event {
                    if let Some(rt) = &runtime {
                        boundary(rt);
                    }
                } else if let RuntimeEvent::ApprovalRequested(request) = event {
                    // Nothing here calls a tool; should anything ask, the answer is no.
                    request.respond(ApprovalDecision::Deny);
                } else if let RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)) = &event {
                    args.asks.answer(request, "watch");
                } else if let RuntimeEvent::Mcp(McpEvent::SamplingRequested(request)) = &event {
                    super::asks::reject_sampling(request, "watch");
                }
            }
        }
    };
    if runtime.is_none() && !started {
        // Stopped while the last steps of start-up (registration) may still be running: give
        // them a moment so the servers are closed in order, not abandoned.
        if let Ok(Ok(Ok(rt))) = tokio::time::timeout(FINISH_START, &mut creating).await {
            runtime = Some(Arc::new(rt));
        }
    }
    match runtime {
        Some(rt) => {
            rt.close().await;
            // The servers' last words and their closes, then the stream ends.
            while let Some(event) = stream.recv().await {
                if stdout_open && write_event(&mut out, &event, args.json).is_err() {
                    stdout_open = false;
                }
            }
        }
        // Still starting: abandoning the start kills what it spawned.
        None => creating.abort(),
    }
    code
}

/// Runs a turn boundary in the background, so events keep flowing while tools are re-listed
/// (its diff arrives as a `ToolsChanged` event).
fn boundary(runtime: &Arc<AgentRuntime>) {
    let rt = runtime.clone();
    tokio::spawn(async move {
        rt.turn_boundary().await;
    });
}

/// Resolves on Ctrl-C, SIGTERM or SIGHUP, and when `stdin_eof_stops`, when stdin reaches its end.
/// stdin is read on a plain thread: a blocking read parked in tokio's pool would hold up the
/// runtime's shutdown.
async fn stop_requested(stdin_eof_stops: bool) {
    let stdin_closed = async move {
        if !stdin_eof_stops {
            return std::future::pending::<()>().await;
        }
        let (tx, closed) = oneshot::channel::<()>();
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = [0u8; 4096];
            while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
            let _ = tx.send(());
        });
        let _ = closed.await;
    };
    tokio::select! {
        () = super::stop_asked() => {}
        () = stdin_closed => {}
    }
}
