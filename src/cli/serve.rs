//! `aimon-console serve --stdio`: the gateway. Other MCP hosts (Claude Code, Codex, an SDK
//! client) start this command as their one server and get the tools of every configured server,
//! named `<server>__<tool>`, with the traits this console resolved as their annotations. Every
//! call passes the same approval gate; with no console to ask, mutating calls are refused with
//! a result that says why. Nothing but MCP is written to stdout; errors go to stderr and the log.

use std::process::ExitCode;
use std::sync::Arc;

use super::asks::AskArgs;
use super::check::start_runtime;
use super::output;
use crate::config::Config;

#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    /// Serve one host over stdin and stdout (the host starts this command as a stdio server).
    #[arg(long, required = true)]
    pub stdio: bool,
}

pub async fn run(config: Config, _args: ServeArgs) -> ExitCode {
    let runtime = match start_runtime(&config, AskArgs::default(), "serve").await {
        Ok(r) => Arc::new(r),
        Err(code) => return code,
    };
    // Every server that can join has joined before the host lists the tools.
    let summary = runtime.wait_started().await;
    for server in summary.servers.iter().filter(|s| s.failure.is_some()) {
        output::error_line(&format!(
            "serve: server {} failed to start; its tools are not offered (aimon-console check says why)",
            server.name
        ));
    }
    let served = runtime.serve_stdio().await;
    runtime.close().await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            output::error_line(&format!("serve: {why}"));
            ExitCode::from(1)
        }
    }
}
