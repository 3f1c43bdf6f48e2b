//! What the gateway's face serves, and from whom: the [`Backend`] the runtime implements (the
//! tools and the calls, resources and prompts, what servers push), and the [`Host`] a call
//! came from. Its own file so that the face's parts (`face_content.rs`, `face_notices.rs`) use
//! it without going through the face.

use std::collections::BTreeMap;

use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::notify::McpNotification;
use super::prompts::{PromptInfo, PromptMessages};
use super::relay::HostRelays;
use super::resources::{Completion, CompletionTarget, ResourceContent, ResourceInfo, TemplateInfo};
use crate::tool::registry::ToolSnapshot;
use crate::tool::{ProgressSink, ToolDescriptor, ToolResult};

/// What a host may list and read beside tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentKind {
    Resources,
    Prompts,
}

/// The host a call came from, as it named itself in its handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub name: String,
    pub version: String,
}

/// What the face serves: the tools, and the calls.
#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    /// The registry's snapshot: a new one whenever a server's tools joined, changed or left.
    /// The face offers its remote tools.
    fn snapshot(&self) -> ToolSnapshot;

    /// Whether a server announced that its tools changed and they were not listed again yet.
    fn stale(&self) -> bool;

    /// Lists again the tools of the servers that announced a change (before a host lists).
    async fn refresh(&self);

    /// Runs `tool` (a remote tool on offer, which the host called `offered`) for `host`,
    /// telling `progress` how it is getting on when the host asked.
    async fn call(
        &self,
        tool: &ToolDescriptor,
        offered: &str,
        arguments: Value,
        host: Host,
        cancel: CancellationToken,
        progress: Option<ProgressSink>,
    ) -> ToolResult;

    /// The host calls in flight by server (a server's sampling or elicitation request goes to
    /// the host whose call it came during), when the backend hands them on.
    fn relays(&self) -> Option<HostRelays>;

    /// A host's session began (`connected`, after its handshake) or ended.
    fn host_session(&self, host: &Host, connected: bool);

    /// Every server log message and resource update from now on, for a host that asked.
    fn host_notices(&self) -> broadcast::Receiver<McpNotification>;

    /// The ready servers that offer `kind`, in config order.
    fn content_servers(&self, kind: ContentKind) -> Vec<String>;

    /// Every resource and resource template of `server`.
    async fn list_resources(
        &self,
        server: &str,
    ) -> Result<(Vec<ResourceInfo>, Vec<TemplateInfo>), String>;

    /// Reads `uri` of `server`.
    async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<Vec<ResourceContent>, String>;

    /// Subscribes to (`on`) or unsubscribes from `uri` of `server`.
    async fn subscribe(&self, server: &str, uri: &str, on: bool) -> Result<(), String>;

    /// Every prompt of `server`.
    async fn list_prompts(&self, server: &str) -> Result<Vec<PromptInfo>, String>;

    /// Prompt `name` of `server` with `arguments`.
    async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: &BTreeMap<String, String>,
        cancel: CancellationToken,
    ) -> Result<PromptMessages, String>;

    /// Suggestions for `argument` of a prompt or template of `server`.
    async fn complete(
        &self,
        server: &str,
        target: &CompletionTarget,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Result<Completion, String>;
}
