//! The runtime behind the gateway's face (`mcp/face.rs`): what a host may call, and each call
//! through the same gate as the operator's and the agent's, marked with the host that asked.
//!
//! Without a console to ask (`serve`), `gateway.unattended` decides: under `refuse` (the
//! default) a mutating call is refused before it reaches a server, nobody being there to
//! approve it; under `rules` it goes to the gate, and runs when a rule or a hook allows it.
//! Either way what would ask is refused (`AnsweredBy::Unattended`), and a rule or a hook may
//! still deny a read-only call. With the
//! console serving (`--serve-http`), a call that asks waits for the operator's answer in the
//! approval modal, as every other call does.
//!
//! Over HTTP every host brings the gateway's bearer token, made on first use and kept (owner
//! only) at `$XDG_STATE_HOME/aimon-console/gateway-token`.

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::AgentRuntime;
use crate::approval::CallOrigin;
use crate::config::Unattended;
use crate::mcp::face::{self, Backend, Host};
use crate::tool::registry::ToolSnapshot;
use crate::tool::{SideEffectLevel, ToolDescriptor, ToolResult};

/// The runtime as the face's backend. `unattended` says what a mutating call gets when no
/// console answers questions (`None`: the console does).
struct Gateway {
    runtime: Arc<AgentRuntime>,
    unattended: Option<Unattended>,
}

#[async_trait::async_trait]
impl Backend for Gateway {
    fn tools(&self) -> Vec<ToolDescriptor> {
        self.runtime.tools()
    }

    fn tool(&self, name: &str) -> Option<ToolDescriptor> {
        self.runtime
            .tool_snapshot()
            .get(name)
            .map(|t| t.descriptor().clone())
    }

    fn snapshot(&self) -> ToolSnapshot {
        self.runtime.tool_snapshot()
    }

    fn stale(&self) -> bool {
        self.runtime.has_stale_tools()
    }

    async fn refresh(&self) {
        if self.runtime.has_stale_tools() {
            self.runtime.turn_boundary().await;
        }
    }

    async fn call(
        &self,
        tool: &ToolDescriptor,
        arguments: Value,
        host: Host,
        cancel: CancellationToken,
    ) -> ToolResult {
        let mutating = tool.side_effect == SideEffectLevel::Mutating;
        if mutating && self.unattended == Some(Unattended::Refuse) {
            return ToolResult::error(format!(
                "refused: {} is mutating, and nobody is at a console to approve it (`serve` \
                 runs unattended, and gateway.unattended is refuse: only read-only tools run)",
                face::offered_name(tool).unwrap_or(&tool.name)
            ));
        }
        let origin = CallOrigin::Host {
            name: host.name,
            version: host.version,
        };
        self.runtime
            .call_from(&tool.name, arguments, cancel, origin)
            .await
            .result
    }
}

impl AgentRuntime {
    /// Serves the tools of every ready server to one host over this process's stdin and stdout
    /// (`serve --stdio`), until the host goes away; no console answers (`unattended`).
    pub async fn serve_stdio(self: &Arc<Self>, unattended: Unattended) -> Result<(), String> {
        face::serve_stdio(self.gateway(Some(unattended))).await
    }

    /// Serves hosts over Streamable HTTP on `listener` (each with `token`) until the runtime
    /// closes; `unattended` when no console answers the questions their calls raise.
    pub async fn serve_http(
        self: &Arc<Self>,
        listener: tokio::net::TcpListener,
        token: String,
        unattended: Option<Unattended>,
    ) -> std::io::Result<()> {
        let stop = self.executor.all_calls.child_token();
        crate::mcp::face_http::serve_http(self.gateway(unattended), listener, token, stop).await
    }

    fn gateway(self: &Arc<Self>, unattended: Option<Unattended>) -> Arc<dyn Backend> {
        Arc::new(Gateway {
            runtime: self.clone(),
            unattended,
        })
    }
}

/// The gateway's bearer token: read from its file, or made (32 random bytes, hex) and written
/// there, owner only, on first use.
pub fn gateway_token() -> std::io::Result<String> {
    let path = crate::config::state_home().join("gateway-token");
    if let Ok(text) = std::fs::read_to_string(&path) {
        let token = text.trim();
        if token.len() >= 32 {
            return Ok(token.to_string());
        }
    }
    let mut bytes = [0u8; 32];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .map_err(|_| std::io::Error::other("no randomness for the gateway token"))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    crate::config::write_private(&path, &format!("{token}\n"))?;
    Ok(token)
}
