//! `start: lazy` servers. At start-up, one whose kept tool list is fresh (`tool_cache`) is not
//! started: it is `idle`, and its tools are offered from that list through a [`LazyClient`].
//! The first call (or listing) through it starts the server — the call waits for that start,
//! under the start-up deadline of this one server, then goes to the started client, and the
//! server's own tools replace the kept ones. Every listing of a lazy server is kept for next
//! time (`join.rs` and `tools.rs` write it).

use std::sync::{Arc, Weak};

use rmcp::model::{CallToolResult, JsonObject};
use tokio_util::sync::CancellationToken;

use super::single::start_one;
use super::Shared;
use crate::config::ServerConfig;
use crate::mcp::client::{DefaultMcpClient, McpClient, McpError};
use crate::mcp::events::{ServerReport, ServerStatus};
use crate::mcp::tool::{ListedTool, McpTool};
use crate::tool::{ProgressSink, Tool};

/// The client of an idle lazy server's kept tools: it starts the server when first used.
pub(super) struct LazyClient {
    config: ServerConfig,
    shared: Weak<Shared>,
    /// One start at a time; the calls that come meanwhile wait for it.
    starting: tokio::sync::Mutex<()>,
}

impl LazyClient {
    /// The server's kept tools, each of them through one client that starts it.
    pub(super) fn tools(
        shared: &Arc<Shared>,
        config: &ServerConfig,
        listed: Vec<ListedTool>,
    ) -> Vec<Arc<dyn Tool>> {
        let client: Arc<dyn McpClient> = Arc::new(LazyClient {
            config: config.clone(),
            shared: Arc::downgrade(shared),
            starting: tokio::sync::Mutex::new(()),
        });
        listed
            .into_iter()
            .map(|tool| {
                Arc::new(McpTool::new(
                    &config.name,
                    config.annotation_trust,
                    tool,
                    client.clone(),
                )) as Arc<dyn Tool>
            })
            .collect()
    }

    /// The running server's client, started now if it is still idle.
    async fn started(&self) -> Result<Arc<DefaultMcpClient>, McpError> {
        let name = &self.config.name;
        let gone = || McpError::Disconnected {
            server: name.clone(),
        };
        let _one = self.starting.lock().await;
        let shared = self.shared.upgrade().ok_or_else(gone)?;
        if shared.closing.is_cancelled() {
            return Err(gone());
        }
        let idle = {
            let set = shared.set();
            if let Some(ready) = set.ready(name) {
                return Ok(ready.client.clone());
            }
            set.report(name).map(|r| r.status) == Some(ServerStatus::Idle)
        };
        if !idle {
            // Restarted by hand, failed, or starting some other way: not this client's to
            // start.
            return Err(gone());
        }
        tracing::info!(server = %name, "a lazy server is started by its first call");
        let (epoch, cancel) = {
            let mut set = shared.set();
            let begun = set.begin(name, &shared.closing);
            set.store(ServerReport::starting(&self.config));
            begun
        };
        shared.bump();
        let report = start_one(&shared, &self.config, epoch, cancel).await;
        let ready = shared.set().ready(name).map(|r| r.client.clone());
        ready.ok_or_else(|| {
            McpError::Transport(match &report.failure {
                Some(f) => format!(
                    "starting {name} for its first call failed: {}: {}",
                    f.class.as_str(),
                    f.message
                ),
                None => format!("starting {name} for its first call failed"),
            })
        })
    }
}

#[async_trait::async_trait]
impl McpClient for LazyClient {
    fn server(&self) -> &str {
        &self.config.name
    }

    /// An idle server is not connected, but it is usable: the first call starts it (and the
    /// calls that come while it starts wait for it). Once that start failed, or the server went
    /// down after it, its kept tools are not.
    fn is_connected(&self) -> bool {
        let Some(shared) = self.shared.upgrade() else {
            return false;
        };
        let set = shared.set();
        match set.ready(&self.config.name) {
            Some(ready) => ready.client.is_connected(),
            None => matches!(
                set.report(&self.config.name).map(|r| r.status),
                Some(ServerStatus::Idle | ServerStatus::Starting)
            ),
        }
    }

    async fn list_tools(&self) -> Result<Vec<ListedTool>, McpError> {
        self.started().await?.list_tools().await
    }

    async fn call_tool(
        &self,
        tool: &str,
        arguments: JsonObject,
        cancel: CancellationToken,
        progress: ProgressSink,
    ) -> Result<CallToolResult, McpError> {
        let client = tokio::select! {
            started = self.started() => started?,
            () = cancel.cancelled() => return Err(McpError::Cancelled),
        };
        client.call_tool(tool, arguments, cancel, progress).await
    }

    /// Nothing runs until the first call.
    async fn close(&self) -> Result<(), McpError> {
        Ok(())
    }
}
