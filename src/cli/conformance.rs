//! `aimon-console conformance URL` (hidden from `--help`): the client under test of the official
//! MCP conformance suite (`.ci/run`). It reads `MCP_CONFORMANCE_SCENARIO`, connects to URL over
//! Streamable HTTP with the console's own manager, client and `McpTool` (no second client), lists
//! the tools and calls the first one: `{"a":2,"b":3}` for `tools_call`, `{}` otherwise.
//!
//! Differences from the console, both on purpose: the suite's mock servers predate
//! `server/discover`, so the handshake is `initialize` only (at `MCP_CONFORMANCE_PROTOCOL_VERSION`,
//! default 2025-11-25); and elicitation requests are accepted with the schema's defaults.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::output;
use crate::config::{AnnotationTrust, RestartPolicy, ServerConfig, TransportKind};
use crate::mcp::client::{ClientOptions, ElicitationPolicy, Lifecycle};
use crate::mcp::events::{null_sink, ServerStatus};
use crate::mcp::manager::McpClientManager;
use crate::mcp::notify::NotificationTap;
use crate::mcp::tool::qualified_name;
use crate::tool::{ToolContext, ToolInput, ToolRegistry};

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
    let options = ClientOptions {
        lifecycle: Lifecycle::Initialize(version),
        elicitation: ElicitationPolicy::AcceptDefaults,
        roots: Vec::new(),
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
        oauth: None,
        request_timeout: REQUEST_TIMEOUT,
        annotation_trust: AnnotationTrust::Ignore,
        // One check, then exit: nothing to supervise.
        restart: RestartPolicy::Never,
        enabled: true,
        roots: None,
    };
    let manager = McpClientManager::with_options(null_sink(), NotificationTap::none(), options);
    let summary = manager.start_all(&[server], None).await;
    let code = match summary.servers.first() {
        Some(report) if report.status == ServerStatus::Ready => {
            call_first(&manager, &scenario).await
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
    manager.close_all().await;
    code
}

/// Calls the first listed tool, if any, through the same `McpTool` the console registers.
async fn call_first(manager: &McpClientManager, scenario: &str) -> ExitCode {
    let Some(first) = manager.tool_names(SERVER).into_iter().next() else {
        return ExitCode::SUCCESS;
    };
    let registry = ToolRegistry::new();
    manager.register_all_tools(&registry);
    let Some(tool) = registry.get(&qualified_name(SERVER, &first)) else {
        output::error_line(&format!("conformance: tool {first} was not registered"));
        return ExitCode::from(1);
    };
    let arguments = match scenario {
        "tools_call" => json!({"a": 2, "b": 3}),
        _ => json!({}),
    };
    let Value::Object(arguments) = arguments else {
        return ExitCode::from(1);
    };
    let context = ToolContext {
        cancel: CancellationToken::new(),
        ..ToolContext::default()
    };
    let result = tool.execute(ToolInput(arguments), context).await;
    output::print(&format!("{}\n", output::safe_text(&result.text)));
    if result.is_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
