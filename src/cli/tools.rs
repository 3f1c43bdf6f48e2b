//! `aimon-console tools [--json]`: the tool table: every tool with its resolved traits and why.

use std::process::ExitCode;

use super::asks::AskArgs;
use super::check::start_runtime;
use super::output::{self, Style};
use crate::config::Config;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct ToolsArgs {
    /// Print a JSON array of TOOL objects (shape in README).
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
    let tools = runtime.tools();
    runtime.close().await;
    if args.json {
        let list: Vec<_> = tools.iter().map(output::tool_json).collect();
        output::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&list).unwrap_or_default()
        ));
    } else {
        output::print(&output::render_tools(&tools, Style::for_stdout()));
        for s in summary.servers.iter().filter(|s| s.failure.is_some()) {
            output::error_line(&format!(
                "note: server {} failed to start ({}); its tools are missing. Run `aimon-console check` for details.",
                s.name,
                s.failure.as_ref().map_or("", |f| f.class.as_str())
            ));
        }
    }
    ExitCode::SUCCESS
}
