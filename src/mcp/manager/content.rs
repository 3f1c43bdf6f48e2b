//! The resource and prompt interfaces of the ready servers: the manager owns which servers are
//! ready, so it is where the runtime gets a server's `McpResourceClient` or `McpPromptClient`.
//!
//! Separate from `tools.rs`: tools are registered once and called through the registry, while
//! resources and prompts are asked for server by server, whenever the driver wants them.

use std::sync::Arc;

use super::McpClientManager;
use crate::mcp::prompts::McpPromptClient;
use crate::mcp::resources::McpResourceClient;
use crate::mcp::skills::McpSkillClient;

impl McpClientManager {
    /// The resource interface of a ready server.
    pub fn resource_client(&self, server: &str) -> Option<Arc<dyn McpResourceClient>> {
        self.shared
            .set()
            .ready(server)
            .map(|s| s.client.clone() as Arc<dyn McpResourceClient>)
    }

    /// The skill interface of a ready server.
    pub fn skill_client(&self, server: &str) -> Option<Arc<dyn McpSkillClient>> {
        self.shared
            .set()
            .ready(server)
            .map(|s| s.client.clone() as Arc<dyn McpSkillClient>)
    }

    /// The prompt interface of a ready server.
    pub fn prompt_client(&self, server: &str) -> Option<Arc<dyn McpPromptClient>> {
        self.shared
            .set()
            .ready(server)
            .map(|s| s.client.clone() as Arc<dyn McpPromptClient>)
    }
}
