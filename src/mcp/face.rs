//! The gateway's face: an MCP server that other hosts (Claude Code, Codex, an SDK client) connect
//! to, offering the tools of every configured server with their *resolved* traits as
//! annotations, each call handed to a [`Backend`] (the runtime, through its one gate).
//!
//! A host is told `tools/list_changed` when the tools on offer change (a server joined, failed,
//! restarted, or announced a change), and a `tools/list` lists announced changes again first.
//!
//! Here because it speaks MCP (rmcp's server side): the runtime above implements [`Backend`]
//! and hands it down, so no arrow points up (docs/ARCHITECTURE.md).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ReadResourceRequestParams, ReadResourceResponse,
    RequestMetaObject, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::Semaphore;

pub use super::face_backend::{Backend, ContentKind, Host};
use super::face_content::{self as content, Content, Routes};
use super::face_notices::HostNotices;
use super::face_offer::{error, result_of, Offer, OfferCache};
use super::relay::{HostRelays, InFlightGuard, Relay};
use crate::config::Naming;
use crate::tool::{ProgressSink, ProgressUpdate, ToolDescriptor};

/// What every host of one gateway shares: the backend, the naming, the tools on offer, and how
/// many calls one host may run at once.
pub struct Gateway {
    pub(super) backend: Arc<dyn Backend>,
    pub(super) naming: Naming,
    offers: OfferCache,
    pub(super) routes: Routes,
    relays: Option<HostRelays>,
    max_calls_per_host: usize,
    /// The allowances of stateless hosts (2026-07-28: a face per request), by the name and
    /// version each gives; a host with a session has its own in its face.
    stateless: std::sync::Mutex<HashMap<(String, String), Arc<Semaphore>>>,
}

/// Most stateless hosts' allowances kept; past it, the idle ones are let go.
const STATELESS_KEPT: usize = 1024;

impl Gateway {
    pub fn new(backend: Arc<dyn Backend>, naming: Naming, max_calls_per_host: usize) -> Arc<Self> {
        Arc::new(Gateway {
            relays: backend.relays(),
            backend,
            naming,
            offers: OfferCache::default(),
            routes: Routes::default(),
            max_calls_per_host: max_calls_per_host.max(1),
            stateless: std::sync::Mutex::default(),
        })
    }

    /// The allowance of stateless `host`.
    fn stateless_allowance(&self, host: &Host) -> Arc<Semaphore> {
        let mut kept = self.stateless.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() >= STATELESS_KEPT {
            let all = self.max_calls_per_host;
            kept.retain(|_, allowance| allowance.available_permits() < all);
        }
        let key = (host.name.clone(), host.version.clone());
        kept.entry(key)
            .or_insert_with(|| Arc::new(Semaphore::new(self.max_calls_per_host)))
            .clone()
    }

    /// What passing resources and prompts through needs.
    fn content(&self) -> Content<'_> {
        Content {
            backend: &*self.backend,
            naming: &self.naming,
            routes: &self.routes,
        }
    }

    fn offer(&self) -> Arc<Offer> {
        self.offers.offer(self.backend.snapshot(), &self.naming)
    }
}

/// Serves `face` on `transport` until the host goes away.
pub(super) async fn serve_on<T, E, A>(face: Face, transport: T) -> Result<(), String>
where
    T: rmcp::transport::IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    use rmcp::ServiceExt;
    let running = face
        .serve(transport)
        .await
        .map_err(|e| format!("the host's handshake failed: {e}"))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("serving the host ended: {e}"))
}

/// One host's MCP server (over stdio; over HTTP, one per session).
pub(super) struct Face(Serving);

/// What one host's face holds, shared with its stdio transport, which takes the host's calls
/// off the line itself (face_direct.rs): the gateway, the host's allowance of calls at once,
/// what it is told of the servers' notices, and the host once joined.
#[derive(Clone)]
pub(super) struct Serving {
    gateway: Arc<Gateway>,
    calls: Arc<Semaphore>,
    notices: Arc<HostNotices>,
    /// The host, once its handshake is done (it is told gone when the session ends); `None`
    /// for a stateless host, whose face serves one request.
    joined: Arc<std::sync::Mutex<Option<Joined>>>,
}

/// A host with a session: as it named itself, as a server's requests may be handed to it
/// (made once, when the gateway hands them on), and the session's peer.
struct Joined {
    host: Host,
    relay: Option<Arc<Relay>>,
    peer: Peer<RoleServer>,
}

impl Drop for Face {
    fn drop(&mut self) {
        let joined = self.0.joined().take();
        if let Some(joined) = joined {
            self.gateway.backend.host_session(&joined.host, false);
        }
    }
}

impl std::ops::Deref for Face {
    type Target = Serving;
    fn deref(&self) -> &Serving {
        &self.0
    }
}

impl Face {
    /// What this face shares with its stdio transport (face_direct.rs).
    pub(super) fn serving(&self) -> Serving {
        self.0.clone()
    }

    pub(super) fn new(gateway: Arc<Gateway>) -> Face {
        let calls = Arc::new(Semaphore::new(gateway.max_calls_per_host));
        Face(Serving {
            gateway,
            calls,
            notices: Arc::default(),
            joined: Arc::default(),
        })
    }

    /// Subscribes the host to (`on`) or unsubscribes it from offered `uri`: at the server, and
    /// in what the host is told.
    async fn subscription(&self, uri: &str, on: bool) -> Result<(), ErrorData> {
        let (server, own) = content::subscribe(&self.gateway.content(), uri, on).await?;
        let backend = &*self.gateway.backend;
        self.notices.subscribe(&server, &own, on, backend);
        Ok(())
    }
}

impl Serving {
    /// Marks the host's call on `tool`'s server in flight, for that server's own requests.
    /// `relay` is the session host's; a stateless host's call is entered as one that takes
    /// no request (it may still be the call a server's request belongs to).
    fn relay(
        &self,
        tool: &ToolDescriptor,
        relay: Option<Arc<Relay>>,
        host: &Host,
        peer: &Peer<RoleServer>,
    ) -> Option<InFlightGuard> {
        let relays = self.gateway.relays.as_ref()?;
        let server = &tool.origin.as_ref()?.server;
        let relay = relay.unwrap_or_else(|| Arc::new(make_relay(relays, host, peer, false)));
        Some(relays.enter(server, relay))
    }

    fn joined(&self) -> std::sync::MutexGuard<'_, Option<Joined>> {
        self.joined.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session's peer, once the host has joined (until then its calls go rmcp's way).
    pub(super) fn session_peer(&self) -> Option<Peer<RoleServer>> {
        self.joined().as_ref().map(|joined| joined.peer.clone())
    }

    /// A host's `tools/call` through the backend: on `peer` (the session's, or rmcp's stand-in
    /// for a stateless host), with the request's `meta` and `ct` cancelling it.
    pub(super) async fn call(
        &self,
        request: CallToolRequestParams,
        peer: &Peer<RoleServer>,
        meta: &RequestMetaObject,
        ct: tokio_util::sync::CancellationToken,
    ) -> rmcp::model::CallToolResult {
        let offer = self.gateway.offer();
        let Some(tool) = offer.get(&request.name) else {
            return error(format!(
                "no tool named {} here (tools/list says what there is)",
                request.name
            ));
        };
        let host = host_of(peer, Some(meta));
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // One host's calls beyond its allowance wait here, not in front of another host's: a
        // host with a session has its face's; a stateless one, the one kept for its name.
        let session = self.joined().as_ref().map(|joined| joined.relay.clone());
        let allowance = match session {
            Some(_) => self.calls.clone(),
            None => self.gateway.stateless_allowance(&host),
        };
        let Ok(_turn) = allowance.acquire_owned().await else {
            return error("the gateway is closing".to_string());
        };
        let (progress, told) = match meta.get_progress_token() {
            Some(token) => {
                let (sink, told) = progress_to(peer.clone(), token);
                (Some(sink), Some(told))
            }
            None => (None, None),
        };
        let in_flight = self.relay(tool, session.flatten(), &host, peer);
        let result = self
            .gateway
            .backend
            .call(tool, &request.name, arguments, host, ct, progress)
            .await;
        drop(in_flight);
        // Every progress notification and log message goes out before the result does.
        if let Some(told) = told {
            let _ = told.await;
        }
        self.notices.tell(peer, &self.gateway.naming).await;
        result_of(result)
    }
}

impl ServerHandler for Face {
    #[allow(deprecated)] // logging (SEP-2577): the hosts of today set a level.
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_logging()
                .enable_completions()
                .enable_prompts()
                .enable_resources()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new(
            "aimon-console",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(
            "aimon-console's gateway: the tools, resources and prompts of the servers it \
                 runs, named as its gateway.naming says (<server>__<tool> by default). Every \
                 call passes its approval gate; readOnlyHint and destructiveHint are the traits \
                 it resolved (the server's annotations under the operator's trust), not the \
                 server's claims.",
        )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let host = host_of(&context.peer, None);
        self.gateway.backend.host_session(&host, true);
        let relay = self
            .gateway
            .relays
            .as_ref()
            .map(|relays| Arc::new(make_relay(relays, &host, &context.peer, true)));
        *self.joined() = Some(Joined {
            host,
            relay,
            peer: context.peer.clone(),
        });
        tokio::spawn(tell_changes(
            self.gateway.clone(),
            self.notices.clone(),
            context.peer,
        ));
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.gateway.backend.refresh().await;
        Ok(ListToolsResult::with_all_items(
            self.gateway.offer().tools.clone(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let result = self
            .0
            .call(request, &context.peer, &context.meta, context.ct.clone())
            .await;
        Ok(result.into())
    }

    #[allow(deprecated)] // SEP-2577 deprecates logging; the hosts of today use it.
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.notices
            .set_level(request.level, &*self.gateway.backend);
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        content::list_resources(&self.gateway.content()).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        content::list_templates(&self.gateway.content()).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        content::read(&self.gateway.content(), &request.uri, context.ct)
            .await
            .map(Into::into)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscription(&request.uri, true).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscription(&request.uri, false).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        content::list_prompts(&self.gateway.content()).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        content::get_prompt(&self.gateway.content(), request, context.ct)
            .await
            .map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        content::complete(&self.gateway.content(), request).await
    }
}

/// How often a host's session looks for a change of the tools on offer.
const WATCH: Duration = Duration::from_millis(250);

/// Tells the host `tools/list_changed` whenever the tools on offer change (a server joined,
/// failed, was restarted, or announced a change of its own), and what it asked to be told of
/// the servers' notices, until it goes away.
async fn tell_changes(gateway: Arc<Gateway>, notices: Arc<HostNotices>, peer: Peer<RoleServer>) {
    let backend = &gateway.backend;
    let mut seen = backend.snapshot();
    let mut told_stale = false;
    loop {
        tokio::time::sleep(WATCH).await;
        if peer.is_transport_closed() {
            return;
        }
        notices.tell(&peer, &gateway.naming).await;
        let now = backend.snapshot();
        let stale = backend.stale();
        let changed = !Arc::ptr_eq(&now, &seen) || (stale && !told_stale);
        seen = now;
        told_stale = stale;
        if changed && peer.notify_tool_list_changed().await.is_err() {
            return;
        }
    }
}

/// `host` as a server's requests may be handed to it: what it declared in its handshake
/// (`declared`), else nothing.
fn make_relay(relays: &HostRelays, host: &Host, peer: &Peer<RoleServer>, declared: bool) -> Relay {
    let info = peer.peer_info().filter(|_| declared);
    let caps = info.as_ref().map(|i| &i.capabilities);
    Relay {
        session: relays.session(),
        name: format!("{} {}", host.name, host.version),
        peer: peer.clone(),
        sampling: caps.is_some_and(|c| c.sampling.is_some()),
        elicitation: caps.is_some_and(|c| c.elicitation.is_some()),
    }
}

/// A sink that tells the host the progress of its call under `token`, in order; the task
/// returned ends once the sink is dropped (the call ended) and all it was given went out.
fn progress_to(
    peer: Peer<RoleServer>,
    token: ProgressToken,
) -> (ProgressSink, tokio::task::JoinHandle<()>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ProgressUpdate>();
    let told = tokio::spawn(async move {
        while let Some(update) = rx.recv().await {
            let mut param = ProgressNotificationParam::new(token.clone(), update.progress);
            param.total = update.total;
            param.message = update.message;
            if peer.notify_progress(param).await.is_err() {
                return;
            }
        }
    });
    let sink = ProgressSink::new(move |update| {
        let _ = tx.send(update);
    });
    (sink, told)
}

/// The host as it named itself: in the request (2026-07-28, stateless: rmcp's stand-in peer
/// then names rmcp itself), else in its handshake.
fn host_of(peer: &Peer<RoleServer>, meta: Option<&RequestMetaObject>) -> Host {
    let named = meta
        .and_then(RequestMetaObject::client_info)
        .or_else(|| peer.peer_info().map(|info| info.client_info.clone()));
    match named {
        Some(info) => Host {
            name: info.name,
            version: info.version,
        },
        None => Host {
            name: "an unnamed host".to_string(),
            version: String::new(),
        },
    }
}
