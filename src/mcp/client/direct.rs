//! Which calls of a session go the direct way (`transport/direct.rs`): over stdio every
//! `tools/call` without a `_meta` of its own; over Streamable HTTP the same from revision
//! 2026-07-28 on (no session to keep), for tools whose calls need no header of rmcp's making.

// Logging is SEP-2577-deprecated in rmcp; the servers of today still use it.
#![allow(deprecated)]

use std::collections::HashSet;

use rmcp::model::{CallToolRequest, ClientRequest, LoggingLevel, ProgressToken, RequestId};

use super::DefaultMcpClient;
use crate::mcp::listed::ListedTool;
use crate::mcp::transport::direct::{DirectCalls, Sent};
use crate::mcp::transport::http_direct::HttpCalls;
use crate::mcp::transport::outbound::{writes_directly, SessionMeta};

/// Where a session's calls go the direct way.
#[derive(Clone)]
pub enum Direct {
    Lines(DirectCalls),
    Http(HttpCalls),
}

impl Direct {
    /// The next request's id and progress token (see [`DirectCalls::ids`]).
    pub fn ids(&self) -> (RequestId, ProgressToken) {
        match self {
            Direct::Lines(calls) => calls.ids(),
            Direct::Http(calls) => calls.ids(),
        }
    }

    /// Whether `call` goes this way: no `_meta` of its own (`outbound::writes_directly`), and
    /// over HTTP one whose headers need nothing of rmcp's (`HttpCalls::takes`).
    pub fn takes(&self, call: &CallToolRequest) -> bool {
        writes_directly(call)
            && match self {
                Direct::Lines(_) => true,
                Direct::Http(calls) => calls.takes(&call.params.name),
            }
    }

    /// Sends `call` (see [`DirectCalls::send`], [`HttpCalls::send`]).
    pub async fn send(
        &self,
        session: &SessionMeta,
        call: &CallToolRequest,
        level: Option<LoggingLevel>,
        ids: (RequestId, ProgressToken),
    ) -> std::io::Result<Sent> {
        match self {
            Direct::Lines(calls) => calls.send(session, call, level, ids).await,
            Direct::Http(calls) => calls.send(session, call, level, ids),
        }
    }
}

impl DefaultMcpClient {
    /// Calls go the direct way on this stdio connection from now on.
    pub fn with_direct(self, calls: DirectCalls) -> DefaultMcpClient {
        self.direct_via(Direct::Lines(calls))
    }

    /// Calls go the direct way on this Streamable HTTP session from now on, if its revision
    /// has no `initialize` (2026-07-28 on) and `make`, given the revision, makes the way.
    /// Older sessions keep rmcp's way, which keeps their session id and re-initialises an
    /// expired one.
    pub fn with_direct_http(
        self,
        make: impl FnOnce(&str) -> Option<HttpCalls>,
    ) -> DefaultMcpClient {
        let stateless = self
            .peer
            .peer_info()
            .is_some_and(|info| !info.protocol_version.has_initialize());
        let calls = stateless
            .then(|| make(&self.identity.protocol_version))
            .flatten();
        match calls {
            Some(calls) => self.direct_via(Direct::Http(calls)),
            None => self,
        }
    }

    /// `way` with the `_meta` rmcp gives every request of this session: at revision
    /// 2026-07-28 the protocol version and the client's info and capabilities, nothing before.
    fn direct_via(mut self, way: Direct) -> DefaultMcpClient {
        let mut meta = rmcp::model::RequestMetaObject::default();
        if let Some(info) = self.peer.peer_info() {
            if !info.protocol_version.has_initialize() {
                let config = rmcp::ClientHandler::get_info(&self.handler);
                meta.set_protocol_version(info.protocol_version.clone());
                meta.set_client_info(config.client_info);
                meta.set_client_capabilities(config.capabilities);
            }
        }
        match SessionMeta::new(&meta.0 .0) {
            Ok(session) => {
                let over = match way {
                    Direct::Lines(_) => "stdio",
                    Direct::Http(_) => "streamable_http",
                };
                tracing::debug!(server = %self.server, over, "tools/call goes the direct way");
                self.direct = Some((way, session));
            }
            Err(e) => tracing::warn!(server = %self.server, error = %e, "calls go through rmcp"),
        }
        self
    }

    /// What sends `request` the direct way: a `tools/call` the way takes; `None` for anything
    /// that goes through rmcp.
    pub(super) fn direct_for<'a>(
        &'a self,
        request: &'a ClientRequest,
    ) -> Option<(&'a Direct, &'a SessionMeta, &'a CallToolRequest)> {
        match (&self.direct, request) {
            (Some((way, session)), ClientRequest::CallToolRequest(call)) if way.takes(call) => {
                Some((way, session, call))
            }
            _ => None,
        }
    }

    /// A new listing: over HTTP, the tools whose schema names `x-mcp-header` parameters go
    /// rmcp's way from now on (it puts those arguments in headers).
    pub(super) fn listed_for_direct(&self, tools: &[ListedTool]) {
        if let Some((Direct::Http(calls), _)) = &self.direct {
            let headed: HashSet<String> = tools
                .iter()
                .filter(|tool| tool.input_schema.as_str().contains("x-mcp-header"))
                .map(|tool| tool.name.clone())
                .collect();
            calls.set_headed(headed);
        }
    }
}
