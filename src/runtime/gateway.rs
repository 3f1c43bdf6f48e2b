//! The runtime behind the gateway's face (`mcp/face.rs`): what a host may call, and each call
//! through the same gate as the operator's and the agent's, marked with the host that asked.
//!
//! Without a console to ask (`serve`), a mutating call is refused before it reaches a server:
//! nobody is there to approve it. Read-only calls run as the gate decides (a rule or a hook may
//! still deny them; one that would ask is refused, nobody being there to answer).

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::AgentRuntime;
use crate::approval::CallOrigin;
use crate::mcp::face::{self, Backend, Host};
use crate::tool::{SideEffectLevel, ToolDescriptor, ToolResult};

/// The runtime as the face's backend.
struct Gateway(Arc<AgentRuntime>);

#[async_trait::async_trait]
impl Backend for Gateway {
    fn tools(&self) -> Vec<ToolDescriptor> {
        self.0.tools()
    }

    async fn call(
        &self,
        tool: &str,
        arguments: Value,
        host: Host,
        cancel: CancellationToken,
    ) -> ToolResult {
        let mutating = self
            .0
            .tools()
            .iter()
            .any(|t| t.name == tool && t.side_effect == SideEffectLevel::Mutating);
        if mutating {
            return ToolResult::error(format!(
                "refused: {} is mutating, and nobody is at a console to approve it (`serve` \
                 runs unattended: only read-only tools run)",
                face::offered_name_of(tool)
            ));
        }
        let origin = CallOrigin::Host {
            name: host.name,
            version: host.version,
        };
        self.0
            .call_from(tool, arguments, cancel, origin)
            .await
            .result
    }
}

impl AgentRuntime {
    /// Serves the tools of every ready server to one host over this process's stdin and stdout
    /// (`serve --stdio`), until the host goes away.
    pub async fn serve_stdio(self: &Arc<Self>) -> Result<(), String> {
        face::serve_stdio(Arc::new(Gateway(self.clone()))).await
    }
}
