//! `aimon-console tools [--json]`: the tool table: every tool with its resolved traits and why.
//! A server that failed to start has no tools in it: the table says so below it, the JSON in
//! `missing`, and the exit code is 1 (as `check`'s).

use std::process::ExitCode;

use serde_json::json;

use super::asks::AskArgs;
use super::check::start_runtime;
use super::output::{self, Style};
use crate::config::Config;
use crate::runtime::ServerStatus;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct ToolsArgs {
    /// Print `{"tools": [TOOL…], "complete", "missing"}` (shape in docs/commands.md).
    #[arg(long)]
    pub json: bool,
}

pub async fn run(config: Config, args: ToolsArgs) -> ExitCode {
    let runtime = match start_runtime(&config, AskArgs::default(), "tools").await {
        Ok(r) => r,
        Err(code) => return code,
    };
    // A report after everything settled: every server that could join has joined.
    let summary = runtime.wait_started().await;
    let tools = runtime.tool_snapshot();
    runtime.close().await;
    let failed: Vec<_> = summary
        .servers
        .iter()
        .filter(|s| s.status == ServerStatus::Failed)
        .collect();
    if args.json {
        // Servers whose tools are not in the list, and why: failed ones, and disabled ones.
        let missing = output::missing_json(&summary.servers);
        let value = json!({
            "tools": crate::runtime::ToolsJson(&tools, Some(runtime.gate())),
            "complete": failed.is_empty(),
            "missing": missing,
        });
        output::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        ));
    } else {
        let listed: Vec<_> = tools.values().map(|t| t.descriptor()).collect();
        output::print(&output::render_tools(&listed, Style::for_stdout()));
        for s in &failed {
            output::error_line(&format!(
                "note: server {} failed to start ({}); its tools are missing. Run `aimon-console check` for details.",
                s.name,
                s.failure.as_ref().map_or("", |f| f.class.as_str())
            ));
        }
    }
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
