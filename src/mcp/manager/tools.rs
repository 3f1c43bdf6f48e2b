//! A manager's tools: registering what its ready servers listed (each tool's traits resolved once,
//! docs/ARCHITECTURE.md §3), listing a server's tools again at a turn boundary, and the per-server
//! requests that need a ready client (`logging/setLevel`).
//!
//! Separate from `launch.rs`, which owns the servers' lives (start, restart, join).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::set::ServerSet;
use super::{McpClientManager, Shared};
use crate::config::StartMode;
use crate::mcp::client::{DefaultMcpClient, McpClient, McpError};
use crate::mcp::notify::LogLevel;
use crate::mcp::tool_cache;
use crate::tool::{Tool, ToolRegistry};

impl Shared {
    /// Registers one ready server's tools in the manager's registry, replacing any it had (in
    /// one step). Returns the names that could not be registered (taken by another tool).
    pub(super) fn register_tools(&self, set: &ServerSet, server: &str) -> Vec<String> {
        let prefix = format!("mcp__{server}__");
        let refused = self
            .registry
            .replace_prefixed(&prefix, build_tools(set, server));
        refused
            .into_iter()
            .map(|dup| {
                tracing::warn!(%server, tool = %dup.0, "tool not registered: name taken");
                dup.0
            })
            .collect()
    }
}

/// One ready server's tools, shared with its entry in the ready set (built once, when it was
/// listed).
fn build_tools(set: &ServerSet, server: &str) -> Vec<Arc<dyn Tool>> {
    let Some(ready) = set.ready(server) else {
        return Vec::new();
    };
    ready
        .tools
        .iter()
        .map(|tool| tool.clone() as Arc<dyn Tool>)
        .collect()
}

impl McpClientManager {
    /// Registers every ready server's tools in another `registry` (a driver that keeps its
    /// own), each resolved once from its annotations and the server's trust. Returns the names
    /// that could not be registered.
    pub fn register_all_tools(&self, registry: &ToolRegistry) -> Vec<String> {
        let set = self.shared.set();
        let mut refused = Vec::new();
        for server in set.ready_names() {
            for tool in build_tools(&set, &server) {
                if let Err(dup) = registry.register(tool) {
                    tracing::warn!(%server, tool = %dup.0, "tool not registered: name taken");
                    refused.push(dup.0);
                }
            }
        }
        refused
    }

    /// The ready servers that announced `tools/list_changed` since their tools were listed.
    pub fn stale_servers(&self) -> Vec<String> {
        self.shared
            .set()
            .ready_servers()
            .filter(|(_, s)| s.client.links().tools_stale())
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Lists a ready server's tools again and swaps them into the registry in one step, each
    /// resolved anew through `McpToolTraits::resolve` under the server's trust (the same single
    /// place as at start-up). Returns the names that could not be registered. On an error the
    /// old tools stay and the server stays stale.
    pub async fn refresh_tools(&self, server: &str) -> Result<Vec<String>, McpError> {
        let client = self.ready_client(server)?;
        let tools = match client.list_tools().await {
            Ok(tools) => tools,
            Err(e) => {
                client.links().tools_stale.store(true, Ordering::SeqCst);
                return Err(e);
            }
        };
        let lazy = self
            .shared
            .set()
            .ready(server)
            .filter(|r| r.config.start == StartMode::Lazy)
            .map(|r| r.config.clone());
        if let Some(config) = lazy {
            tool_cache::write(&config, &tools, client.tools_ttl());
        }
        let mut set = self.shared.set();
        if !set.set_tools(server, tools) {
            return Err(McpError::Disconnected {
                server: server.to_string(),
            });
        }
        Ok(self.shared.register_tools(&set, server))
    }

    /// The client of a ready server; `Disconnected` when it is not ready.
    fn ready_client(&self, server: &str) -> Result<Arc<DefaultMcpClient>, McpError> {
        self.shared
            .set()
            .ready(server)
            .map(|s| s.client.clone())
            .ok_or_else(|| McpError::Disconnected {
                server: server.to_string(),
            })
    }

    /// Asks a ready server to send log messages at `level` and above (`logging/setLevel`).
    pub async fn set_log_level(&self, server: &str, level: LogLevel) -> Result<(), McpError> {
        let client = self.ready_client(server)?;
        client.set_log_level(level).await
    }

    /// The names of a ready server's tools, in the order the server listed them.
    pub fn tool_names(&self, server: &str) -> Vec<String> {
        self.shared
            .set()
            .ready(server)
            .map(|s| s.tools.iter().map(|t| t.raw_name().to_string()).collect())
            .unwrap_or_default()
    }
}
