//! `start: lazy` servers. At start-up, one whose kept tool list is fresh (`tool_cache`) is not
//! started: it is `idle`, and its tools are offered from that list through a [`LazyClient`].
//! The first call (or listing) through it starts the server — the call waits for that start,
//! under the start-up deadline of this one server, then goes to the started client, and the
//! server's own tools replace the kept ones. Every listing of a lazy server is kept for next
//! time (`join.rs` and `tools.rs` write it).

use std::sync::{Arc, Weak};

use rmcp::model::{CallToolResult, JsonObject};
use tokio_util::sync::CancellationToken;

use super::set::mcp_tools;
use super::single::start_one;
use super::Shared;
use crate::config::ServerConfig;
use crate::mcp::client::{DefaultMcpClient, McpClient, McpError};
use crate::mcp::events::{ServerReport, ServerStatus};
use crate::mcp::tool::ListedTool;
use crate::tool::{ProgressSink, Tool};

/// The client of an idle lazy server's kept tools: it starts the server when first used.
pub(super) struct LazyClient {
    config: ServerConfig,
    shared: Weak<Shared>,
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
        });
        mcp_tools(client, config, listed)
            .into_iter()
            .map(|tool| tool as Arc<dyn Tool>)
            .collect()
    }

    /// The running server's client: started now if it is still idle, waited for while it
    /// starts. The start runs as a task of the manager's, so a call cancelled while it waits
    /// leaves it to finish (or `close_all` to end it), never half done.
    async fn started(&self) -> Result<Arc<DefaultMcpClient>, McpError> {
        let name = &self.config.name;
        let gone = || McpError::Disconnected {
            server: name.clone(),
        };
        let shared = self.shared.upgrade().ok_or_else(gone)?;
        // Subscribed first: a change between the look below and the wait is not missed.
        let mut changed = shared.changed.subscribe();
        let begun = {
            let mut set = shared.set();
            if let Some(ready) = set.ready(name) {
                return Ok(ready.client.clone());
            }
            match set.report(name).map(|r| r.status) {
                Some(ServerStatus::Idle) if !shared.closing.is_cancelled() => {
                    let begun = set.begin(name, &shared.closing);
                    set.store(ServerReport::starting(&self.config));
                    Some(begun)
                }
                Some(ServerStatus::Starting) => None,
                // Failed, disabled, or restarted by hand into another state: not this client's
                // to start.
                _ => return Err(gone()),
            }
        };
        if let Some((epoch, cancel)) = begun {
            tracing::info!(server = %name, "a lazy server is started by its first call");
            shared.bump();
            let (task_shared, config) = (shared.clone(), self.config.clone());
            shared
                .tasks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .spawn(async move {
                    start_one(&task_shared, &config, epoch, cancel).await;
                });
        }
        loop {
            {
                let set = shared.set();
                if let Some(ready) = set.ready(name) {
                    return Ok(ready.client.clone());
                }
                let report = set.report(name);
                if report.map(|r| r.status) != Some(ServerStatus::Starting) {
                    return Err(McpError::Transport(
                        match report.and_then(|r| r.failure.as_ref()) {
                            Some(f) => format!(
                                "starting {name} for its first call failed: {}: {}",
                                f.class.as_str(),
                                f.message
                            ),
                            None => format!("starting {name} for its first call failed"),
                        },
                    ));
                }
            }
            let more = tokio::select! {
                changed = changed.changed() => changed.is_ok(),
                () = shared.closing.cancelled() => false,
            };
            if !more {
                return Err(gone());
            }
        }
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
