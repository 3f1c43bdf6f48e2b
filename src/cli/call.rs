//! `aimon-console call TOOL [--args JSON] [--yes] [--json] [--events]`: one call through the same
//! gate as the console. A call that needs approval asks y/N on the terminal; without a terminal it
//! is refused unless `--yes`. `--events` prints the run's events first (one JSON object a line
//! with `--json`). Exit 0 when the call succeeded, 2 when `--args` is not a JSON object or does
//! not fit the tool's input schema (nothing is called), 1 otherwise.

use std::process::ExitCode;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::asks::AskArgs;
use super::events::write_event;
use super::output::{self, safe_text};
use crate::config::{Config, HookAction, LocalTools};
use crate::runtime::{AgentRuntimeFactory, CallStatus, McpEvent, RuntimeEvent};
use crate::telemetry;
use crate::tool::schema;

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

/// Why `tool` cannot be one of the config's, when its name alone says so: a server's tool
/// named without its `mcp__` prefix, or a server the config does not have (each with the
/// nearest names). A slip in the tool's own name is found once its server has started.
fn misnamed(tool: &str, server: Option<&str>, config: &Config) -> Option<String> {
    let names = || config.mcp.servers.iter().map(|s| s.name.as_str());
    let did_you_mean = |near: Vec<String>| {
        if near.is_empty() {
            String::new()
        } else {
            format!(" (did you mean {}?)", near.join(" or "))
        }
    };
    match server {
        Some(server) if !names().any(|n| n == server) => {
            let rest = &tool["mcp__".len() + server.len()..];
            let near = crate::text::nearest(server, names())
                .into_iter()
                .map(|n| format!("mcp__{n}{rest}"))
                .collect();
            Some(format!(
                "no tool named {tool}: the config has no server {server}{}",
                did_you_mean(near)
            ))
        }
        Some(_) => None,
        None if LocalTools::ALL.contains(tool) => None,
        None => {
            let prefixed = format!("mcp__{tool}");
            let served = server_of(&prefixed).is_some_and(|s| names().any(|n| n == s));
            Some(format!(
                "no tool named {tool}{}",
                did_you_mean(if served { vec![prefixed] } else { Vec::new() })
            ))
        }
    }
}

pub async fn run(mut config: Config, args: CallArgs) -> ExitCode {
    let arguments: Value = match serde_json::from_str(&args.args) {
        Ok(v @ Value::Object(_)) => v,
        Ok(other) => {
            output::error_line(&format!(
                "error: --args must be a JSON object, not {}",
                match other {
                    Value::Array(_) => "an array",
                    Value::String(_) => "a string",
                    Value::Number(_) => "a number",
                    Value::Bool(_) => "true/false",
                    Value::Null => "null",
                    Value::Object(_) => "an object",
                }
            ));
            return ExitCode::from(super::EXIT_CONFIG);
        }
        Err(e) => {
            output::error_line(&format!("error: --args is not valid JSON: {e}"));
            return ExitCode::from(super::EXIT_CONFIG);
        }
    };
    if LocalTools::ALL.contains(&args.tool) && !config.policy.local_tools.contains(&args.tool) {
        output::error_line(&format!(
            "error: the local tool {} is off: add it to policy.local_tools in {} to use it",
            args.tool,
            config.path.display()
        ));
        return ExitCode::from(1);
    }
    // Only the server that serves the tool needs to start, and those that `mcp_tool` hooks
    // call (each hook waits for its own server, within its timeout).
    let wanted = server_of(&args.tool).map(str::to_string);
    if let Some(why) = misnamed(&args.tool, wanted.as_deref(), &config) {
        output::error_line(&format!(
            "error: {why}; `aimon-console tools` lists the tools"
        ));
        return ExitCode::from(1);
    }
    let hook_servers: Vec<String> = config
        .hooks
        .iter()
        .filter_map(|h| match &h.action {
            HookAction::McpTool { server, .. } => Some(server.clone()),
            HookAction::Command { .. } => None,
        })
        .collect();
    config
        .mcp
        .servers
        .retain(|s| Some(&s.name) == wanted.as_ref() || hook_servers.contains(&s.name));

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
                RuntimeEvent::ApprovalRequested(request) => {
                    super::approve::answer(request, yes, &CancellationToken::new()).await
                }
                RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)) => {
                    asks.answer(&request, "call")
                }
                RuntimeEvent::Mcp(McpEvent::SamplingRequested(request)) => {
                    super::asks::reject_sampling(&request, "call")
                }
                _ => {}
            }
        }
    });
    let runtime =
        match AgentRuntimeFactory::create(&config, telemetry::options(&config), events).await {
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

    // Arguments that do not fit the schema are a mistake in the command line, like bad JSON:
    // exit 2 without calling anything.
    if let Some(tool) = runtime.tools().into_iter().find(|t| t.name == args.tool) {
        if let Err(problems) = schema::validate(&tool.input_schema.to_value(), &arguments) {
            runtime.close().await;
            let _ = driver.await;
            output::error_line(&format!(
                "error: --args do not match the input schema of {}: {}",
                args.tool,
                safe_text(&problems.join("; "))
            ));
            return ExitCode::from(super::EXIT_CONFIG);
        }
    }

    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    let ctrl_c = tokio::spawn(async move {
        super::stop_asked().await;
        on_ctrl_c.cancel();
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
