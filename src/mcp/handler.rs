//! Our side of an MCP session as rmcp sees it: what the client declares (roots, sampling,
//! elicitation; the protocol version offered) and how it answers what a server asks —
//! `roots/list` from the config, `ping`, sampling and elicitation declined until the console
//! has their UI — reporting every such request as an `McpEvent::ServerRequest`.
//!
//! Separate from `client.rs`, which drives requests the other way.

// Roots, sampling and logging are SEP-2577-deprecated in rmcp; the servers of today use them.
#![allow(deprecated)]

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    CustomRequest, CustomResult, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ElicitationSchema, ErrorCode, ErrorData, FormElicitationCapability,
    Implementation, ListRootsResult, ProtocolVersion, Root, RootsCapabilities, SamplingCapability,
};
use rmcp::service::{RequestContext, RoleClient};
use rmcp::ClientHandler;

use super::events::{McpEvent, RequestOutcome};
use super::session::SessionLinks;
use super::transport::era::EraMemory;

/// Why `sampling/createMessage` is declined, as the server and the operator are told.
pub const SAMPLING_DECLINED: &str =
    "sampling declined: aimon-console does not run sampling requests yet (no sampling UI)";
/// Why `elicitation/create` is declined under [`ElicitationPolicy::Decline`].
pub const ELICITATION_DECLINED: &str =
    "elicitation declined: aimon-console has no elicitation UI yet";

/// How a client answers `elicitation/create`. The console's own elicitation UI comes later;
/// until then it declines (the server carries on without the input).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ElicitationPolicy {
    /// Decline every request.
    #[default]
    Decline,
    /// Accept form requests with the requested schema's defaults (the conformance client).
    AcceptDefaults,
}

/// Which handshake a client runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lifecycle {
    /// `server/discover` (2026-07-28) first, for a bounded share of the handshake timeout,
    /// then `initialize` (DESIGN §4.6); a server whose last good handshake was `initialize`
    /// goes straight to it (the memory is shared by every start with these options).
    Auto(EraMemory),
    /// Only `initialize`, offering this protocol version (e.g. `2025-11-25`).
    Initialize(String),
}

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle::Auto(EraMemory::default())
    }
}

/// What a client declares and how it behaves; the console uses the default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientOptions {
    pub lifecycle: Lifecycle,
    pub elicitation: ElicitationPolicy,
    /// The `roots/list` answer: `file://` URIs (config `mcp.roots`).
    pub roots: Vec<String>,
}

/// Our side of the MCP session: identity, capabilities (roots, sampling, elicitation) and the
/// answers to what a server asks; every such request is reported on the session's sink.
#[derive(Debug, Clone)]
pub struct AimonClientHandler {
    elicitation: ElicitationPolicy,
    protocol_version: ProtocolVersion,
    roots: Vec<String>,
    links: Option<SessionLinks>,
}

impl Default for AimonClientHandler {
    fn default() -> Self {
        AimonClientHandler::new(&ClientOptions::default())
    }
}

impl AimonClientHandler {
    /// A handler that reports server requests on `links`' sink.
    pub fn with_links(options: &ClientOptions, links: SessionLinks) -> Self {
        AimonClientHandler {
            links: Some(links),
            ..AimonClientHandler::new(options)
        }
    }

    fn report(&self, method: &str, outcome: RequestOutcome, detail: String) {
        if let Some(links) = &self.links {
            (links.sink)(McpEvent::ServerRequest {
                server: links.server.clone(),
                method: method.to_string(),
                outcome,
                detail,
            });
        }
    }

    pub fn new(options: &ClientOptions) -> Self {
        let protocol_version = match &options.lifecycle {
            Lifecycle::Auto(_) => ProtocolVersion::LATEST_WITH_INITIALIZE,
            Lifecycle::Initialize(version) => {
                serde_json::from_value(serde_json::Value::String(version.clone()))
                    .unwrap_or(ProtocolVersion::LATEST_WITH_INITIALIZE)
            }
        };
        AimonClientHandler {
            elicitation: options.elicitation,
            protocol_version,
            roots: options.roots.clone(),
            links: None,
        }
    }
}

impl ClientHandler for AimonClientHandler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        capabilities.roots = Some(RootsCapabilities::default());
        // Declared so servers can ask (and the operator sees that they did); declined until
        // the console has a sampling UI.
        capabilities.sampling = Some(SamplingCapability::default());
        let mut config = ClientConfig::new(
            capabilities,
            Implementation::new("aimon-console", env!("CARGO_PKG_VERSION")),
        );
        config.protocol_version = self.protocol_version.clone();
        config
    }

    async fn ping(&self, _context: RequestContext<RoleClient>) -> Result<(), ErrorData> {
        self.report("ping", RequestOutcome::Answered, "pong".into());
        Ok(())
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let detail = match self.roots.len() {
            0 => "no roots".to_string(),
            n => format!(
                "{n} root{}: {}",
                if n == 1 { "" } else { "s" },
                self.roots.join(", ")
            ),
        };
        self.report("roots/list", RequestOutcome::Answered, detail);
        Ok(ListRootsResult::new(
            self.roots.iter().map(Root::new).collect(),
        ))
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.report(
            "sampling/createMessage",
            RequestOutcome::Declined,
            SAMPLING_DECLINED.into(),
        );
        // -1: what the reference SDKs answer when the user rejects a sampling request.
        Err(ErrorData::new(ErrorCode(-1), SAMPLING_DECLINED, None))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let (result, outcome, detail) = match (self.elicitation, request) {
            (
                ElicitationPolicy::AcceptDefaults,
                ElicitRequestParams::FormElicitationParams {
                    requested_schema, ..
                },
            ) => (
                ElicitResult::new(ElicitationAction::Accept)
                    .with_content(schema_defaults(&requested_schema)),
                RequestOutcome::Answered,
                "accepted with the schema's defaults".to_string(),
            ),
            (ElicitationPolicy::AcceptDefaults | ElicitationPolicy::Decline, _) => (
                ElicitResult::new(ElicitationAction::Decline),
                RequestOutcome::Declined,
                ELICITATION_DECLINED.to_string(),
            ),
        };
        self.report("elicitation/create", outcome, detail);
        Ok(result)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleClient>,
    ) -> Result<CustomResult, ErrorData> {
        let method = crate::text::sanitize_line(&request.method, 100);
        self.report(
            &method,
            RequestOutcome::Declined,
            "unknown method: answered method-not-found".into(),
        );
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("aimon-console does not handle {method}"),
            None,
        ))
    }
}

/// An object holding every property of `schema` that declares a `default`, set to it.
fn schema_defaults(schema: &ElicitationSchema) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    if let Ok(serde_json::Value::Object(schema)) = serde_json::to_value(schema) {
        if let Some(serde_json::Value::Object(properties)) = schema.get("properties") {
            for (name, property) in properties {
                if let Some(default) = property.get("default") {
                    out.insert(name.clone(), default.clone());
                }
            }
        }
    }
    serde_json::Value::Object(out)
}
