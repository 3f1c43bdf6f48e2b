//! `aimon-console call TOOL [--args JSON] [--yes] [--json] [--events]`: one call through the same
//! gate as the console. A call that needs approval asks y/N on the terminal; without a terminal it
//! is refused unless `--yes`. `--events` prints the run's events first (one JSON object a line
//! with `--json`). Exit 0 when the call succeeded, 1 otherwise.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::asks::AskArgs;
use super::events::write_event;
use super::output::{self, safe_text};
use crate::approval::{ApprovalDecision, ApprovalRequest};
use crate::config::Config;
use crate::runtime::{AgentRuntimeFactory, CallStatus, McpEvent, RuntimeEvent, RuntimeOptions};
use crate::tool::SideEffectLevel;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct CallArgs {
    /// The tool to call, e.g. `mcp__demo__echo` or `read`.
    pub tool: String,
    /// The arguments, a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub args: String,
    /// Approve the call if it needs approval (the side-effect ceiling still holds).
    #[arg(long)]
    pub yes: bool,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print the events of the call as they happen (server start, logs, progress, status), one
    /// a line; with --json one JSON object a line, and the outcome as the last line.
    #[arg(long)]
    pub events: bool,
    #[command(flatten)]
    pub asks: AskArgs,
}

/// The server a qualified tool name belongs to (`mcp__<server>__…`); server names have no `_`.
fn server_of(tool: &str) -> Option<&str> {
    tool.strip_prefix("mcp__")?
        .split_once("__")
        .map(|(server, _)| server)
}

pub async fn run(mut config: Config, args: CallArgs) -> ExitCode {
    let arguments: Value = match serde_json::from_str(&args.args) {
        Ok(v) => v,
        Err(e) => {
            output::error_line(&format!("error: --args is not valid JSON: {e}"));
            return ExitCode::from(super::EXIT_CONFIG);
        }
    };
    // Only the server that serves the tool needs to start.
    let wanted = server_of(&args.tool).map(str::to_string);
    config
        .mcp
        .servers
        .retain(|s| Some(&s.name) == wanted.as_ref());

    let (events, mut stream) = AgentRuntimeFactory::events();
    let yes = args.yes;
    let asks = args.asks;
    let print = args.events.then_some(args.json);
    let driver = tokio::spawn(async move {
        let mut out = std::io::stdout();
        while let Some(event) = stream.recv().await {
            if let Some(json) = print {
                // A closed stdout stops the printing, never the call.
                let _ = write_event(&mut out, &event, json);
            }
            match event {
                RuntimeEvent::ApprovalRequested(request) => answer(request, yes).await,
                RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)) => {
                    asks.answer(&request, "call")
                }
                _ => {}
            }
        }
    });
    let runtime =
        match AgentRuntimeFactory::create(&config, RuntimeOptions::default(), events).await {
            Ok(r) => r,
            Err(err) => {
                output::error_line(&format!("error: {err}"));
                return ExitCode::from(1);
            }
        };
    // Only the tool's own server is waited for: the others never hold a call back.
    let report = match &wanted {
        Some(server) => runtime.wait_for_server(server).await,
        None => None,
    };
    if let Some(failure) = report.as_ref().and_then(|r| r.failure.as_ref()) {
        output::error_line(&format!(
            "server {} failed to start ({}); run `aimon-console check` for details",
            report.as_ref().map_or("", |r| r.name.as_str()),
            failure.class.as_str()
        ));
    }

    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let outcome = runtime.call(&args.tool, arguments, cancel).await;
    ctrl_c.abort();
    runtime.close().await;
    // Closing ended the stream: the driver prints what is left and stops.
    if let Err(e) = driver.await {
        tracing::warn!(error = %e, "the event driver of `call` failed");
    }

    if args.json && args.events {
        let mut value = serde_json::to_value(&outcome).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.insert("type".into(), Value::String("outcome".into()));
        }
        output::print(&format!("{value}\n"));
    } else if args.json {
        let value = serde_json::to_value(&outcome).unwrap_or(Value::Null);
        output::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        ));
    } else if outcome.status == CallStatus::Ok {
        output::print(&format!("{}\n", safe_text(&outcome.result.text)));
    } else {
        output::error_line(&format!(
            "{}: {}",
            outcome.status.as_str(),
            safe_text(&outcome.result.text)
        ));
    }
    if outcome.status == CallStatus::Ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Answers one approval request: `--yes`, else y/N on the terminal, else refuse.
async fn answer(request: ApprovalRequest, yes: bool) {
    if yes {
        request.respond(ApprovalDecision::AllowOnce);
        return;
    }
    let tool = &request.tool;
    let level = match tool.side_effect {
        SideEffectLevel::Mutating => "MUTATING",
        SideEffectLevel::ReadOnly => "read-only",
    };
    let destructive = if tool.destructive.is_destructive() {
        ", DESTRUCTIVE"
    } else {
        ""
    };
    if !std::io::stdin().is_terminal() {
        output::error_line(&format!(
            "refused: {} is {level}{destructive} and needs approval, but there is no terminal to ask on (pass --yes to approve)",
            tool.name
        ));
        request.respond(ApprovalDecision::Deny);
        return;
    }
    let prompt = format!(
        "{} is {level}{destructive} ({})\narguments: {}\nallow this call? [y/N] ",
        tool.name,
        safe_text(&request.why),
        safe_text(&request.arguments.to_string()),
    );
    let decision = tokio::task::spawn_blocking(move || {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(prompt.as_bytes());
        let _ = err.flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(_) if matches!(line.trim(), "y" | "Y" | "yes") => ApprovalDecision::AllowOnce,
            _ => ApprovalDecision::Deny,
        }
    })
    .await
    .unwrap_or(ApprovalDecision::Deny);
    request.respond(decision);
}

#[cfg(test)]
mod tests {
    use super::server_of;

    #[test]
    fn finds_the_server_of_a_qualified_name() {
        assert_eq!(server_of("mcp__demo__echo"), Some("demo"));
        assert_eq!(server_of("mcp__my-srv__a__b"), Some("my-srv"));
        assert_eq!(server_of("read"), None);
    }
}
