//! `aimon-console check [--json]`: start everything, print the start-up report, exit 0 when all
//! enabled servers are ready, 1 when any failed, 2 on a config error.

use std::process::ExitCode;

use tokio_util::sync::CancellationToken;

use super::asks::AskArgs;
use super::output::{self, Style};
use crate::approval::{AnsweredBy, ApprovalDecision};
use crate::config::Config;
use crate::runtime::ServerStatus;
use crate::runtime::{AgentRuntime, AgentRuntimeFactory, McpEvent, RuntimeEvent, RuntimeOptions};
use crate::telemetry;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct CheckArgs {
    /// Print the report as JSON (shape in docs/commands.md).
    #[arg(long)]
    pub json: bool,
}

/// Starts a runtime on `config` with local tools, for headless `command`; what servers ask
/// of the operator is answered as `asks` says. An approval nobody gives is a denial (the call's
/// question goes unanswered).
pub async fn start_runtime(
    config: &Config,
    asks: AskArgs,
    command: &'static str,
) -> Result<AgentRuntime, ExitCode> {
    start_runtime_answering(config, asks, command, None, telemetry::options(config)).await
}

/// [`start_runtime`], every approval question answered `approvals` (`serve`: refused as
/// unattended, nobody being at a console) instead of left unanswered.
pub async fn start_runtime_answering(
    config: &Config,
    asks: AskArgs,
    command: &'static str,
    approvals: Option<AnsweredBy>,
    options: RuntimeOptions,
) -> Result<AgentRuntime, ExitCode> {
    let (events, mut stream) = AgentRuntimeFactory::events();
    // Headless commands read results, not the stream: drain it so nothing piles up.
    let drain = CancellationToken::new();
    let stop = drain.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                event = stream.recv() => match event {
                    None => break,
                    Some(RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request))) => {
                        asks.answer(&request, command)
                    }
                    Some(RuntimeEvent::Mcp(McpEvent::SamplingRequested(request))) => {
                        super::asks::reject_sampling(&request, command)
                    }
                    Some(RuntimeEvent::ApprovalRequested(request)) => {
                        if let Some(by) = approvals {
                            request.respond_by(ApprovalDecision::Deny, by);
                        }
                    }
                    // Dropped: an approval nobody gives is a denial.
                    Some(_) => {}
                },
                () = stop.cancelled() => break,
            }
        }
    });
    let runtime = AgentRuntimeFactory::create(config, options, events).await;
    runtime.map_err(|err| {
        output::error_line(&format!("error: {err}"));
        ExitCode::from(1)
    })
}

pub async fn run(config: Config, args: CheckArgs) -> ExitCode {
    let runtime = match start_runtime(&config, AskArgs::default(), "check").await {
        Ok(r) => r,
        Err(code) => return code,
    };
    // A report after everything settled: every server that could join has joined.
    let summary = runtime.wait_started().await;
    // The registry's own snapshot: the report reads the tools where they are held.
    let tools = runtime.tool_snapshot();
    runtime.close().await;

    if args.json {
        output::print_json(&output::CheckJson::new(&summary, &tools, runtime.gate()));
    } else {
        let style = Style::for_stdout();
        let ready = summary
            .servers
            .iter()
            .filter(|s| s.status == ServerStatus::Ready)
            .count();
        let enabled = summary
            .servers
            .iter()
            .filter(|s| s.status != ServerStatus::Disabled)
            .count();
        output::print(&format!(
            "{}  {}  {ready}/{enabled} ready  took {}  (deadline {})\n\n",
            style.bold("aimon-console check"),
            config.path.display(),
            crate::text::fmt_duration(summary.elapsed),
            crate::text::fmt_duration(summary.deadline),
        ));
        output::print(&output::render_servers(&summary, style));
        output::print("\n");
        let listed: Vec<_> = tools.values().map(|t| t.descriptor()).collect();
        output::print(&output::render_tools(&listed, style));
    }
    if summary
        .servers
        .iter()
        .any(|s| s.status == ServerStatus::Failed)
    {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
