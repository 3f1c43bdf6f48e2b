//! Our side of an MCP session as rmcp sees it: what the client declares (roots, sampling,
//! elicitation in form and URL mode; the protocol version offered) and how it answers what a
//! server asks — `roots/list` from the config, `ping`, sampling handed to the driver as a
//! `SamplingRequest` when a model is configured (else declined, saying so), elicitation handed
//! to the driver as an `ElicitationRequest` (dropped unanswered: declined) — reporting every
//! such request as an `McpEvent::ServerRequest`.
//!
//! Separate from `client.rs`, which drives requests the other way.

// Roots, sampling and logging are SEP-2577-deprecated in rmcp; the servers of today use them.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    CustomRequest, CustomResult, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ErrorCode, ErrorData, FormElicitationCapability, Implementation,
    ListRootsResult, ProtocolVersion, Role, Root, RootsCapabilities, SamplingCapability,
    SamplingMessage, SamplingMessageContentBlock, UrlElicitationCapability,
};
use rmcp::service::{RequestContext, RoleClient};
use rmcp::ClientHandler;

use super::elicitation::{ElicitationAnswer, ElicitationRequest};
use super::events::{McpEvent, RequestOutcome};
use super::relay::{Asks, HostRelays, Relay};
use super::sampling::{sampling_ask, SamplingAnswer, SamplingRequest};
use super::session::SessionLinks;
use super::transport::era::EraMemory;

/// Why `sampling/createMessage` is declined when no model is configured, as the server and
/// the operator are told.
const SAMPLING_DECLINED: &str =
    "sampling declined: aimon-console has no model configured (no `agent:` in its config)";
/// The same reason as the operator's Events line says it (after `declined`).
const NO_MODEL: &str = "no model configured (no `agent:` in its config)";

/// What a client declares and how it behaves; the console uses the default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientOptions {
    /// The handshake: `server/discover` (2026-07-28) first, for a bounded share of the handshake
    /// timeout, then `initialize` (docs/ARCHITECTURE.md §4.6); a server whose last good handshake
    /// was `initialize` goes straight to it (the memory is shared by every start with these
    /// options).
    pub eras: EraMemory,
    /// The `roots/list` answer: `file://` URIs (config `mcp.roots`).
    pub roots: Vec<String>,
    /// Declare sampling and hand `sampling/createMessage` to the driver (a model is
    /// configured: config `agent:`); otherwise it is not declared, and declined if asked.
    pub sampling: bool,
    /// The runtime serves other hosts (the gateway): a server's sampling or elicitation request
    /// made during one host's call goes to that host when it declared the capability (so
    /// sampling is declared too).
    pub relays: Option<HostRelays>,
}

/// Our side of the MCP session: identity, capabilities (roots, sampling, elicitation) and the
/// answers to what a server asks; every such request is reported on the session's sink, and
/// an elicitation goes to the driver through it.
#[derive(Debug, Clone)]
pub struct AimonClientHandler {
    roots: Vec<String>,
    sampling: bool,
    relays: Option<HostRelays>,
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

    /// The gateway host this session's server request goes to, if one takes it.
    fn host_for(&self, asks: Asks) -> Option<Arc<Relay>> {
        let server = &self.links.as_ref()?.server;
        self.relays.as_ref()?.host_for(server, asks)
    }

    /// Reports a request the host answered (or failed to).
    fn report_relayed(&self, method: &str, host: &Relay, error: Option<&ErrorData>) {
        let name = crate::text::sanitize_line(&host.name, 100);
        match error {
            None => self.report(
                method,
                RequestOutcome::Answered,
                format!("answered by host {name}, whose call made it"),
            ),
            Some(e) => self.report(
                method,
                RequestOutcome::Declined,
                format!(
                    "host {name} did not answer: {}",
                    crate::text::sanitize_line(&e.message, 300)
                ),
            ),
        }
    }

    pub fn new(options: &ClientOptions) -> Self {
        AimonClientHandler {
            roots: options.roots.clone(),
            sampling: options.sampling,
            relays: options.relays.clone(),
            links: None,
        }
    }
}

impl ClientHandler for AimonClientHandler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        // Both modes go to the driver: a form modal (checked against the schema before it
        // goes back), or the URL with what it is for.
        capabilities.elicitation = Some(
            ElicitationCapability::new()
                .with_form(FormElicitationCapability::new().with_schema_validation(true))
                .with_url(UrlElicitationCapability::new()),
        );
        capabilities.roots = Some(RootsCapabilities::default());
        // Only when a model can answer (the driver shows the request, the agent's model answers
        // it, the operator approves what goes back), or a host the gateway serves may.
        if self.sampling || self.relays.is_some() {
            capabilities.sampling = Some(SamplingCapability::default());
        }
        let mut config = ClientConfig::new(
            capabilities,
            Implementation::new("aimon-console", env!("CARGO_PKG_VERSION")),
        );
        // What `initialize` offers; a 2026-07-28 server is found by `server/discover` first.
        config.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
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
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        const METHOD: &str = "sampling/createMessage";
        if let Some(host) = self.host_for(Asks::Sampling) {
            let answer = host.sample(params, &context.ct).await;
            self.report_relayed(METHOD, &host, answer.as_ref().err());
            return answer;
        }
        let links = match &self.links {
            Some(links) if self.sampling => links,
            _ => {
                self.report(METHOD, RequestOutcome::Declined, NO_MODEL.into());
                // -1: what the reference SDKs answer when the user rejects a sampling request.
                return Err(ErrorData::new(ErrorCode(-1), SAMPLING_DECLINED, None));
            }
        };
        let (asked, answer) = SamplingRequest::new(&links.server, sampling_ask(params));
        (links.sink)(McpEvent::SamplingRequested(asked));
        let answer = tokio::select! {
            answer = answer => answer.unwrap_or_else(|_| {
                SamplingAnswer::Reject("no one was there to answer it".into())
            }),
            () = context.ct.cancelled() => {
                self.report(METHOD, RequestOutcome::Declined, "withdrawn by the server".into());
                return Err(ErrorData::new(ErrorCode::INTERNAL_ERROR, "request cancelled", None));
            }
        };
        match answer {
            SamplingAnswer::Answer {
                text,
                model,
                stop_reason,
                edited,
            } => {
                let detail = format!(
                    "model {}{}, {} chars",
                    crate::text::sanitize_line(&model, 100),
                    if edited {
                        ", edited by the operator"
                    } else {
                        ""
                    },
                    text.chars().count()
                );
                self.report(METHOD, RequestOutcome::Answered, detail);
                let message =
                    SamplingMessage::new(Role::Assistant, SamplingMessageContentBlock::text(text));
                let result = CreateMessageResult::new(message, model);
                Ok(match stop_reason {
                    Some(reason) => result.with_stop_reason(reason),
                    None => result,
                })
            }
            SamplingAnswer::Reject(why) => {
                let why = crate::text::sanitize_line(&why, 300);
                self.report(METHOD, RequestOutcome::Declined, format!("rejected: {why}"));
                Err(ErrorData::new(
                    ErrorCode(-1),
                    format!("sampling rejected: {why}"),
                    None,
                ))
            }
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        const METHOD: &str = "elicitation/create";
        if let Some(host) = self.host_for(Asks::Elicitation) {
            let answer = host.elicit(request, &context.ct).await;
            self.report_relayed(METHOD, &host, answer.as_ref().err());
            return answer;
        }
        let decline = ElicitResult::new(ElicitationAction::Decline);
        let Some(links) = &self.links else {
            return Ok(decline);
        };
        let made = match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => match serde_json::to_value(&requested_schema) {
                Ok(schema) => ElicitationRequest::form(&links.server, message, schema),
                Err(e) => Err(format!("its schema could not be read: {e}")),
            },
            ElicitRequestParams::UrlElicitationParams {
                message,
                url,
                elicitation_id,
                ..
            } => Ok(ElicitationRequest::url(
                &links.server,
                message,
                url,
                elicitation_id,
            )),
            // rmcp may add modes.
            _ => Err("a mode aimon-console does not know".to_string()),
        };
        let (asked, answer) = match made {
            Ok(made) => made,
            Err(why) => {
                let why = crate::text::sanitize_line(&why, 300);
                self.report(METHOD, RequestOutcome::Declined, format!("declined: {why}"));
                return Ok(decline);
            }
        };
        (links.sink)(McpEvent::ElicitationRequested(asked));
        let answer = tokio::select! {
            answer = answer => answer.unwrap_or_else(|_| {
                ElicitationAnswer::Decline("no one was there to answer it".into())
            }),
            () = context.ct.cancelled() => {
                self.report(METHOD, RequestOutcome::Declined, "withdrawn by the server".into());
                return Err(ErrorData::new(ErrorCode::INTERNAL_ERROR, "request cancelled", None));
            }
        };
        let (result, outcome, detail) = match answer {
            ElicitationAnswer::Accept(content) => {
                let result = ElicitResult::new(ElicitationAction::Accept);
                let result = match content {
                    Some(content) => result.with_content(serde_json::Value::Object(content)),
                    None => result,
                };
                (result, RequestOutcome::Answered, "accepted".to_string())
            }
            ElicitationAnswer::Decline(why) => (
                decline,
                RequestOutcome::Declined,
                format!("declined: {}", crate::text::sanitize_line(&why, 300)),
            ),
            ElicitationAnswer::Cancel => (
                ElicitResult::new(ElicitationAction::Cancel),
                RequestOutcome::Declined,
                "cancelled".to_string(),
            ),
        };
        self.report(METHOD, outcome, detail);
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
