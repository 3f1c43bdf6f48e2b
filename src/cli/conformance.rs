//! `aimon-console conformance URL` (hidden from `--help`): the client under test of the official
//! MCP conformance suite (`.ci/run`). It reads `MCP_CONFORMANCE_SCENARIO`, connects to URL over
//! Streamable HTTP through the console's own runtime (manager, client, `McpTool`, the gate; no
//! second client), lists the tools and calls the first one: `{"a":2,"b":3}` for `tools_call`,
//! `{}` otherwise, approving the call as `call --yes` does.
//!
//! Differences from the console, both on purpose: the suite's mock servers predate
//! `server/discover`, so the handshake is `initialize` only (at `MCP_CONFORMANCE_PROTOCOL_VERSION`,
//! default 2025-11-25); and elicitation requests are accepted with the schema's defaults (by
//! the driver, as headless `--elicitation defaults` does).

use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::output;
use crate::approval::ApprovalDecision;
use crate::config::{
    AnnotationTrust, Config, PolicyConfig, RestartPolicy, ServerConfig, TransportKind,
};
use crate::runtime::{
    AgentRuntime, AgentRuntimeFactory, ClientOptions, Lifecycle, McpEvent, RuntimeEvent,
    RuntimeOptions, ServerStatus,
};

/// The server's name inside this run.
const SERVER: &str = "conformance";
/// Protocol version offered when the suite names none.
const DEFAULT_PROTOCOL_VERSION: &str = "2025-11-25";
/// Every request's deadline (the suite gives a scenario 30 s).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(clap::Args, Debug, Clone)]
pub struct ConformanceArgs {
    /// The scenario's server URL (the suite appends it).
    pub url: String,
}

pub async fn run(args: ConformanceArgs) -> ExitCode {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_PROTOCOL_VERSION.to_string());
    tracing::info!(%scenario, %version, "conformance run");
    let options = RuntimeOptions {
        local_tools: false,
        client: ClientOptions {
            lifecycle: Lifecycle::Initialize(version),
            roots: Vec::new(),
        },
        ..RuntimeOptions::default()
    };
    let server = ServerConfig {
        name: SERVER.to_string(),
        transport: TransportKind::StreamableHttp,
        command: None,
        args: Vec::new(),
        env: Default::default(),
        cwd: None,
        url: Some(args.url),
        headers: Default::default(),
        bearer_token: None,
        request_timeout: REQUEST_TIMEOUT,
        annotation_trust: AnnotationTrust::Ignore,
        // One check, then exit: nothing to supervise.
        restart: RestartPolicy::Never,
        enabled: true,
        roots: None,
    };
    let mut config = Config::from_servers(vec![server], PolicyConfig::default());
    config.mcp.roots = Vec::new();
    let (events, mut stream) = AgentRuntimeFactory::events();
    // The suite is the operator: every approval is given, as `call --yes` would, and every
    // elicitation accepted with the schema's defaults, as `--elicitation defaults` would.
    let driver = tokio::spawn(async move {
        while let Some(event) = stream.recv().await {
            match event {
                RuntimeEvent::ApprovalRequested(request) => {
                    request.respond(ApprovalDecision::AllowOnce)
                }
                RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)) => {
                    request.accept_defaults()
                }
                _ => {}
            }
        }
    });
    let runtime = match AgentRuntimeFactory::create(&config, options, events).await {
        Ok(runtime) => runtime,
        Err(e) => {
            output::error_line(&format!("conformance: {e}"));
            return ExitCode::from(1);
        }
    };
    let code = match runtime.wait_for_server(SERVER).await {
        Some(report) if report.status == ServerStatus::Ready => {
            call_first(&runtime, &scenario).await
        }
        Some(report) => {
            let why = report
                .failure
                .as_ref()
                .map(|f| format!("{}: {}", f.class.as_str(), f.message))
                .unwrap_or_default();
            output::error_line(&format!("conformance: the server did not start ({why})"));
            ExitCode::from(1)
        }
        None => ExitCode::from(1),
    };
    runtime.close().await;
    let _ = driver.await;
    code
}

/// Calls the first tool the server listed, if any, through the runtime (the gate, the same
/// `McpTool` the console registers).
async fn call_first(runtime: &AgentRuntime, scenario: &str) -> ExitCode {
    let Some(first) = runtime.server_tool_names(SERVER).into_iter().next() else {
        return ExitCode::SUCCESS;
    };
    let arguments = match scenario {
        "tools_call" => json!({"a": 2, "b": 3}),
        _ => json!({}),
    };
    let Some(tool) = runtime.tools().into_iter().find(|t| {
        t.origin
            .as_ref()
            .is_some_and(|o| o.server == SERVER && o.tool == first)
    }) else {
        output::error_line(&format!("conformance: tool {first} was not registered"));
        return ExitCode::from(1);
    };
    let outcome = runtime
        .call(&tool.name, arguments, CancellationToken::new())
        .await;
    output::print(&format!("{}\n", output::safe_text(&outcome.result.text)));
    if outcome.result.is_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
