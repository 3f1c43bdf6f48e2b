//! The gateway's face: an MCP server that other hosts (Claude Code, Codex, an SDK client) connect
//! to, offering the tools of every configured server with their *resolved* traits as
//! annotations, each call handed to a [`Backend`] (the runtime, through its one gate).
//!
//! A host is told `tools/list_changed` when the tools on offer change (a server joined, failed,
//! restarted, or announced a change), and a `tools/list` lists announced changes again first.
//!
//! Here because it speaks MCP (rmcp's server side): the runtime above implements [`Backend`]
//! and hands it down, so no arrow points up (docs/ARCHITECTURE.md).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::tool::registry::ToolSnapshot;
use crate::tool::{SideEffectLevel, ToolDescriptor, ToolResult};

/// The host a call came from, as it named itself in its handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub name: String,
    pub version: String,
}

/// What the face serves: the tools, and the calls.
#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    /// Every tool on offer now (the face offers the remote ones).
    fn tools(&self) -> Vec<ToolDescriptor>;

    /// The tool listed as `name` (`mcp__<server>__<tool>`), if there is one now.
    fn tool(&self, name: &str) -> Option<ToolDescriptor>;

    /// The registry's snapshot: a new one whenever a server's tools joined, changed or left.
    fn snapshot(&self) -> ToolSnapshot;

    /// Whether a server announced that its tools changed and they were not listed again yet.
    fn stale(&self) -> bool;

    /// Lists again the tools of the servers that announced a change (before a host lists).
    async fn refresh(&self);

    /// Runs `tool` (a remote tool on offer) for `host`.
    async fn call(
        &self,
        tool: &ToolDescriptor,
        arguments: Value,
        host: Host,
        cancel: CancellationToken,
    ) -> ToolResult;
}

/// The name a host sees for a tool: `notes__write_note` for `mcp__notes__write_note` (the server
/// kept, the prefix every host adds its own of left out). `None` for local tools.
pub fn offered_name(tool: &ToolDescriptor) -> Option<&str> {
    tool.origin.as_ref()?;
    tool.name.strip_prefix("mcp__")
}

/// Serves the face over this process's stdin and stdout until the host goes away. When they
/// are pipes (as a host starts a stdio server) they are read and written without blocking, in
/// the runtime's own event loop: tokio's stdin and stdout hand every read and write to a
/// blocking thread, a wake-up each way on every message.
pub async fn serve_stdio(backend: Arc<dyn Backend>) -> Result<(), String> {
    let face = Face { backend };
    match stdio_pipes() {
        Ok(pipes) => serve_on(face, pipes).await,
        Err(_) => serve_on(face, rmcp::transport::io::stdio()).await,
    }
}

/// Stdin and stdout as non-blocking pipe ends (`Err` when either is not a pipe: both are
/// checked before either is made non-blocking, so the fallback reads a blocking stdin).
fn stdio_pipes() -> std::io::Result<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;
    let fifo = |fd: OwnedFd| -> std::io::Result<OwnedFd> {
        let file = std::fs::File::from(fd);
        if file.metadata()?.file_type().is_fifo() {
            Ok(OwnedFd::from(file))
        } else {
            Err(std::io::Error::other("not a pipe"))
        }
    };
    let stdin = fifo(std::io::stdin().as_fd().try_clone_to_owned()?)?;
    let stdout = fifo(std::io::stdout().as_fd().try_clone_to_owned()?)?;
    Ok((
        tokio::net::unix::pipe::Receiver::from_owned_fd(stdin)?,
        tokio::net::unix::pipe::Sender::from_owned_fd(stdout)?,
    ))
}

async fn serve_on<T, E, A>(face: Face, transport: T) -> Result<(), String>
where
    T: rmcp::transport::IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    use rmcp::ServiceExt;
    let running = face
        .serve(transport)
        .await
        .map_err(|e| format!("the host's handshake failed: {e}"))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("serving the host ended: {e}"))
}

/// One host's MCP server (over stdio; over HTTP, one per session).
pub(super) struct Face {
    backend: Arc<dyn Backend>,
}

impl Face {
    pub(super) fn new(backend: Arc<dyn Backend>) -> Face {
        Face { backend }
    }
}

impl ServerHandler for Face {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new(
            "aimon-console",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(
            "aimon-console's gateway: the tools of the servers it runs, named \
                 <server>__<tool>. Every call passes its approval gate; readOnlyHint and \
                 destructiveHint are the traits it resolved (the server's annotations under the \
                 operator's trust), not the server's claims.",
        )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        tokio::spawn(tell_changes(self.backend.clone(), context.peer));
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.backend.refresh().await;
        let tools = self.backend.tools();
        Ok(ListToolsResult::with_all_items(
            tools.iter().filter_map(offered).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let listed = format!("mcp__{}", request.name);
        let Some(tool) = self.backend.tool(&listed).filter(|t| t.origin.is_some()) else {
            return Ok(error(format!(
                "no tool named {} here (tools/list says what there is)",
                request.name
            ))
            .into());
        };
        let host = host_of(&context);
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = self
            .backend
            .call(&tool, arguments, host, context.ct.clone())
            .await;
        Ok(result_of(result).into())
    }
}

/// How often a host's session looks for a change of the tools on offer.
const WATCH: Duration = Duration::from_millis(250);

/// Tells the host `tools/list_changed` whenever the tools on offer change (a server joined,
/// failed, was restarted, or announced a change of its own), until it goes away.
async fn tell_changes(backend: Arc<dyn Backend>, peer: Peer<RoleServer>) {
    let mut seen = backend.snapshot();
    let mut told_stale = false;
    loop {
        tokio::time::sleep(WATCH).await;
        if peer.is_transport_closed() {
            return;
        }
        let now = backend.snapshot();
        let stale = backend.stale();
        let changed = !Arc::ptr_eq(&now, &seen) || (stale && !told_stale);
        seen = now;
        told_stale = stale;
        if changed && peer.notify_tool_list_changed().await.is_err() {
            return;
        }
    }
}

/// A tool as a host sees it: its hints are the resolved traits.
fn offered(tool: &ToolDescriptor) -> Option<Tool> {
    let name = offered_name(tool)?.to_string();
    let origin = tool.origin.as_ref()?;
    let schema = match tool.input_schema.parsed() {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let mut offered = Tool::new_with_raw(name, Some(tool.description.clone().into()), schema);
    offered.title = origin.title.clone();
    offered.output_schema = origin
        .output_schema
        .as_ref()
        .and_then(|s| s.parsed().as_object().cloned())
        .map(Arc::new);
    let read_only = matches!(tool.side_effect, SideEffectLevel::ReadOnly);
    Some(offered.with_annotations(ToolAnnotations::from_raw(
        None,
        Some(read_only),
        Some(tool.destructive.is_destructive()),
        None,
        None,
    )))
}

fn host_of(context: &RequestContext<RoleServer>) -> Host {
    match context.peer.peer_info() {
        Some(info) => Host {
            name: info.client_info.name.clone(),
            version: info.client_info.version.clone(),
        },
        None => Host {
            name: "an unnamed host".to_string(),
            version: String::new(),
        },
    }
}

fn error(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The result as MCP: its text, and its structured content when it had any.
fn result_of(result: ToolResult) -> CallToolResult {
    let content = vec![ContentBlock::text(result.text)];
    let mut out = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    out.structured_content = result.structured;
    out
}
