//! A manager's tools: registering what its ready servers listed (each tool's traits resolved
//! once, DESIGN §3), listing a server's tools again at a turn boundary, and the per-server
//! requests that need a ready client (`logging/setLevel`).
//!
//! Separate from `manager.rs`, which owns the servers' lives (start, restart, close).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::McpClientManager;
use crate::mcp::client::{DefaultMcpClient, McpClient, McpError};
use crate::mcp::notify::LogLevel;
use crate::mcp::tool::McpTool;
use crate::tool::{Tool, ToolRegistry};

impl McpClientManager {
    /// Registers every ready server's tools, resolving each tool's traits once from its
    /// annotations and the server's trust. Returns the names that could not be registered.
    pub fn register_all_tools(&self, registry: &ToolRegistry) -> Vec<String> {
        let names: Vec<String> = self
            .ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect();
        names
            .iter()
            .flat_map(|name| self.register_server_tools(name, registry))
            .collect()
    }

    /// Registers one ready server's tools (see `register_all_tools`).
    pub(in crate::mcp) fn register_server_tools(
        &self,
        name: &str,
        registry: &ToolRegistry,
    ) -> Vec<String> {
        let mut refused = Vec::new();
        for tool in self.build_tools(name) {
            if let Err(dup) = registry.register(tool) {
                tracing::warn!(server = %name, tool = %dup.0, "tool not registered: name taken");
                refused.push(dup.0);
            }
        }
        refused
    }

    /// One ready server's tools, each resolved from its annotations and the server's trust.
    pub(in crate::mcp) fn build_tools(&self, name: &str) -> Vec<Arc<dyn Tool>> {
        let ready = self.ready.lock().unwrap_or_else(|e| e.into_inner());
        let Some(server) = ready.get(name) else {
            return Vec::new();
        };
        let client: Arc<dyn McpClient> = server.client.clone();
        server
            .tools
            .iter()
            .map(|tool| {
                Arc::new(McpTool::new(
                    name,
                    server.config.annotation_trust,
                    tool,
                    client.clone(),
                )) as Arc<dyn Tool>
            })
            .collect()
    }

    /// The ready servers that announced `tools/list_changed` since their tools were listed.
    pub fn stale_servers(&self) -> Vec<String> {
        self.ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, s)| s.client.links().tools_stale())
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Lists a ready server's tools again and swaps them into `registry` in one step, each
    /// resolved anew through `McpToolTraits::resolve` under the server's trust (the same single
    /// place as at start-up). Returns the names that could not be registered. On an error the
    /// old tools stay and the server stays stale.
    pub async fn refresh_tools(
        &self,
        server: &str,
        registry: &ToolRegistry,
    ) -> Result<Vec<String>, McpError> {
        let client = self.ready_client(server)?;
        let tools = match client.list_tools().await {
            Ok(tools) => tools,
            Err(e) => {
                client.links().tools_stale.store(true, Ordering::SeqCst);
                return Err(e);
            }
        };
        match self
            .ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(server)
        {
            Some(entry) => entry.tools = tools,
            None => {
                return Err(McpError::Disconnected {
                    server: server.to_string(),
                })
            }
        }
        let adapters = self.build_tools(server);
        let refused = registry.replace_prefixed(&format!("mcp__{server}__"), adapters);
        Ok(refused.into_iter().map(|d| d.0).collect())
    }

    /// The client of a ready server; `Disconnected` when it is not ready.
    fn ready_client(&self, server: &str) -> Result<Arc<DefaultMcpClient>, McpError> {
        self.ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(server)
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
        self.ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(server)
            .map(|s| s.tools.iter().map(|t| t.name.to_string()).collect())
            .unwrap_or_default()
    }
}
