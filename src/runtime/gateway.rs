//! The runtime behind the gateway's face (`mcp/face.rs`): what a host may call, and each call
//! through the same gate as the operator's and the agent's, marked with the host that asked.
//!
//! Without a console to ask (`serve`), `gateway.unattended` decides: under `refuse` (the
//! default) a mutating call is refused before it reaches a server, nobody being there to
//! approve it; under `rules` it goes to the gate, and runs when a rule or a hook allows it.
//! Either way what would ask is refused (`AnsweredBy::Unattended`), and a rule or a hook may
//! still deny a read-only call. With the
//! console serving (`--serve-http`), a call that asks waits for the operator's answer in the
//! approval modal, as every other call does; the daemon's waits for its consoles while one is
//! attached, and with none `gateway.unattended` decides as under `serve`.
//!
//! Over HTTP every host brings the gateway's bearer token, made on first use and kept (owner
//! only) at `$XDG_STATE_HOME/aimon-console/gateway-token`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::{AgentRuntime, RuntimeEvent};
use crate::approval::CallOrigin;
use crate::config::{GatewayConfig, Unattended};
use crate::mcp::face::{Backend, ContentKind, Gateway, Host};
use crate::mcp::face_direct;
use crate::mcp::notify::McpNotification;
use crate::mcp::prompts::{PromptInfo, PromptMessages};
use crate::mcp::relay::HostRelays;
use crate::mcp::resources::{
    Completion, CompletionTarget, ResourceContent, ResourceInfo, TemplateInfo,
};
use crate::tool::registry::ToolSnapshot;
use crate::tool::{ProgressSink, SideEffectLevel, ToolDescriptor, ToolResult};

/// Whether a console answers the questions a host's calls raise; when none does,
/// `gateway.unattended` decides what they get.
pub enum Attended {
    /// The console serving hosts (`--serve-http`, `gateway.listen` in the console).
    Always,
    /// `serve`: nobody ever is.
    Never,
    /// The daemon: while the function says a console is attached.
    While(Arc<dyn Fn() -> bool + Send + Sync>),
}

impl Attended {
    fn now(&self) -> bool {
        match self {
            Attended::Always => true,
            Attended::Never => false,
            Attended::While(attached) => attached(),
        }
    }

    /// Why nobody answers, in the words a refused host is given.
    fn nobody(&self) -> &'static str {
        match self {
            Attended::While(_) => "no console is attached to the daemon",
            Attended::Always | Attended::Never => "`serve` runs unattended",
        }
    }
}

/// The runtime as the face's backend. `unattended` says what a mutating call gets when no
/// console answers questions (`attended`).
struct Served {
    runtime: Arc<AgentRuntime>,
    attended: Attended,
    unattended: Unattended,
}

#[async_trait::async_trait]
impl Backend for Served {
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
        offered: &str,
        arguments: Value,
        host: Host,
        cancel: CancellationToken,
        progress: Option<ProgressSink>,
    ) -> ToolResult {
        let mutating = tool.side_effect == SideEffectLevel::Mutating;
        if mutating && self.unattended == Unattended::Refuse && !self.attended.now() {
            return ToolResult::error(format!(
                "refused: {offered} is mutating, and nobody is at a console to approve it ({}, \
                 and gateway.unattended is refuse: only read-only tools run)",
                self.attended.nobody()
            ));
        }
        let origin = CallOrigin::Host {
            name: host.name,
            version: host.version,
        };
        self.runtime
            .call_reporting(&tool.name, arguments, cancel, origin, progress)
            .await
            .result
    }
    fn host_session(&self, host: &Host, connected: bool) {
        self.runtime.executor.bus.send(RuntimeEvent::HostSession {
            name: host.name.clone(),
            version: host.version.clone(),
            connected,
        });
    }

    fn relays(&self) -> Option<HostRelays> {
        self.runtime.relays.clone()
    }

    fn host_notices(&self) -> broadcast::Receiver<McpNotification> {
        self.runtime.executor.bus.host_notices()
    }

    fn content_servers(&self, kind: ContentKind) -> Vec<String> {
        match kind {
            ContentKind::Resources => self.runtime.resource_servers(),
            ContentKind::Prompts => self.runtime.prompt_servers(),
        }
    }

    async fn list_resources(
        &self,
        server: &str,
    ) -> Result<(Vec<ResourceInfo>, Vec<TemplateInfo>), String> {
        let listing = self.runtime.list_resources(server).await;
        listing
            .map(|l| (l.resources, l.templates))
            .map_err(|e| e.to_string())
    }

    async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<Vec<ResourceContent>, String> {
        let read = self.runtime.read_resource(server, uri, cancel).await;
        read.map_err(|e| e.to_string())
    }

    async fn subscribe(&self, server: &str, uri: &str, on: bool) -> Result<(), String> {
        let set = self.runtime.set_subscription(server, uri, on).await;
        set.map_err(|e| e.to_string())
    }

    async fn list_prompts(&self, server: &str) -> Result<Vec<PromptInfo>, String> {
        let listed = self.runtime.list_prompts(server).await;
        listed.map_err(|e| e.to_string())
    }

    async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: &BTreeMap<String, String>,
        cancel: CancellationToken,
    ) -> Result<PromptMessages, String> {
        let got = self
            .runtime
            .get_prompt(server, name, arguments, cancel)
            .await;
        got.map_err(|e| e.to_string())
    }

    async fn complete(
        &self,
        server: &str,
        target: &CompletionTarget,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Result<Completion, String> {
        let completed = self
            .runtime
            .complete(server, target, argument, value, context)
            .await;
        completed.map_err(|e| e.to_string())
    }
}

impl AgentRuntime {
    /// Serves the tools of every ready server to one host over this process's stdin and stdout
    /// (`serve --stdio`), until the host goes away; no console answers (`unattended`).
    pub async fn serve_stdio(self: &Arc<Self>, config: &GatewayConfig) -> Result<(), String> {
        face_direct::serve_stdio(self.gateway(config, Attended::Never)).await
    }

    /// Serves hosts over Streamable HTTP on `listener` (each with `token`) until the runtime
    /// closes. While `attended` says a console answers the questions their calls raise, their
    /// calls wait for it; else `gateway.unattended` decides.
    pub async fn serve_http(
        self: &Arc<Self>,
        listener: tokio::net::TcpListener,
        token: String,
        config: &GatewayConfig,
        attended: Attended,
    ) -> std::io::Result<()> {
        let stop = self.executor.all_calls.child_token();
        let gateway = self.gateway(config, attended);
        crate::mcp::face_http::serve_http(gateway, listener, token, stop).await
    }

    fn gateway(self: &Arc<Self>, config: &GatewayConfig, attended: Attended) -> Arc<Gateway> {
        let served = Arc::new(Served {
            runtime: self.clone(),
            attended,
            unattended: config.unattended,
        });
        Gateway::new(served, config.naming.clone(), config.max_calls_per_host)
    }
}

/// The gateway's bearer token: read from its file, or made (32 random bytes, hex) and written
/// there, owner only, on first use.
pub fn gateway_token() -> std::io::Result<String> {
    state_token("gateway-token")
}

/// The token consoles bring to a daemon over TCP (`daemon.listen`), kept as the gateway's is.
pub fn daemon_token() -> std::io::Result<String> {
    state_token("daemon-token")
}

/// The token in the state folder's `file`, made on first use. Two processes making it at
/// once agree on one: each writes its own to a file of its own and links that into place,
/// which only the first does; the other then reads the first's.
fn state_token(file: &str) -> std::io::Result<String> {
    let path = crate::config::state_home().join(file);
    let read = || {
        let text = std::fs::read_to_string(&path).ok()?;
        let token = text.trim();
        (token.len() >= 32).then(|| token.to_string())
    };
    if let Some(token) = read() {
        return Ok(token);
    }
    let mut bytes = [0u8; 32];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .map_err(|_| std::io::Error::other(format!("no randomness for the {file}")))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    // One that is there but is no token (cut short, edited) is made again.
    if path.exists() {
        let _ = std::fs::remove_file(&path);
    }
    let mine = path.with_file_name(format!(".{file}.{}", std::process::id()));
    crate::config::write_private(&mine, &format!("{token}\n"))?;
    let linked = std::fs::hard_link(&mine, &path);
    let _ = std::fs::remove_file(&mine);
    match linked {
        Ok(()) => Ok(token),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read()
            .ok_or_else(|| std::io::Error::other(format!("{} is not a token", path.display()))),
        Err(e) => Err(e),
    }
}
