//! How the Resources and Prompts panes follow the servers: each server's listing is asked for
//! when it becomes ready with the capability, again when it announces a list change, and its
//! rows keep their subscription and "updated" marks across listings. A `resources/updated`
//! marks its row and re-reads the resource if it is open.
//!
//! Separate from `state.rs` (servers, tools, calls, events) because these rows are fetched on
//! demand through effects rather than pushed by the runtime. The rows themselves are in
//! `listing.rs`; what Enter on a row does is in `content_open.rs`.

use super::app::App;
use super::listing::{ContentEvent, Listing, RowKind};

use super::messages::{Effect, Level};
use super::modals::Modal;
use super::state::EventKind;
use crate::runtime::{PromptInfo, ResourceListing, ServerReport, ServerStatus};
use crate::text::{sanitize, sanitize_line};

impl App {
    /// What came back from the work of these panes.
    pub(super) fn on_content_event(&mut self, event: ContentEvent) -> Vec<Effect> {
        match event {
            ContentEvent::ResourcesListed { server, result } => {
                self.resources_listed(server, result)
            }
            ContentEvent::ResourceRead {
                server,
                uri,
                result,
            } => {
                if let Some(Modal::Resource(view)) = &mut self.overlays.modal {
                    if view.server == server && view.uri == uri {
                        view.loaded(result);
                    }
                }
            }
            ContentEvent::Subscribed {
                server,
                uri,
                on,
                result,
            } => self.subscription_set(server, uri, on, result),
            ContentEvent::Completed { seq, result } => {
                if let Some(Modal::Form(form)) = &mut self.overlays.modal {
                    match result {
                        Ok(values) => form.completions(seq, values),
                        Err(e) => self.notify(
                            Level::Warn,
                            format!("completion/complete failed: {}", sanitize_line(&e, 200)),
                        ),
                    }
                }
            }
            ContentEvent::PromptsListed { server, result } => self.prompts_listed(server, result),
            ContentEvent::PromptGot {
                server,
                name,
                result,
            } => {
                if let Some(Modal::Prompt(view)) = &mut self.overlays.modal {
                    if view.source == Some((server, name)) {
                        view.prompt_got(result);
                    }
                }
            }
            ContentEvent::Saved { path, result } => {
                let path = sanitize_line(&path.display().to_string(), 200);
                match result {
                    Ok(n) => self.notify(Level::Info, format!("wrote {n} bytes to {path}")),
                    Err(e) => self.notify(
                        Level::Error,
                        format!("not saved to {path}: {}", sanitize_line(&e, 200)),
                    ),
                }
            }
            ContentEvent::UrlOpened { url, result } => {
                let url = sanitize_line(&url, 200);
                match result {
                    Ok(()) => self.notify(Level::Info, format!("opened {url}")),
                    Err(e) => self.notify(
                        Level::Warn,
                        format!("{} — open it yourself: {url}", sanitize_line(&e, 100)),
                    ),
                }
            }
        }
        Vec::new()
    }

    fn server_order(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.name.clone()).collect()
    }

    /// A server finished starting: a ready one with resources or prompts is listed; its
    /// subscriptions (from before a restart) are asked for again. One that is not ready keeps
    /// its rows until it is back.
    pub(super) fn content_on_started(&mut self, report: &ServerReport) -> Vec<Effect> {
        let server = report.name.clone();
        let mut effects = Vec::new();
        // Without a runtime (or a daemon) yet, nothing can be asked: its arrival asks for
        // every ready server.
        let asked_of = self.runtime().is_some() || self.attachment().is_some();
        if report.status != ServerStatus::Ready || !asked_of {
            return effects;
        }
        let caps = report.capabilities.clone().unwrap_or_default();
        if caps.resources.is_some() {
            self.panes
                .resources
                .listings
                .insert(server.clone(), Listing::Loading);
            effects.push(Effect::ListResources {
                server: server.clone(),
            });
            for row in self
                .panes
                .resources
                .rows
                .iter()
                .filter(|r| r.server == server && r.subscribed)
            {
                effects.push(Effect::Subscribe {
                    server: server.clone(),
                    uri: row.uri.clone(),
                    on: true,
                });
            }
        } else {
            self.panes.resources.rows.retain(|r| r.server != server);
            self.panes.resources.listings.remove(&server);
        }
        if caps.prompts.is_some() {
            self.panes
                .prompts
                .listings
                .insert(server.clone(), Listing::Loading);
            effects.push(Effect::ListPrompts { server });
        } else {
            self.panes.prompts.rows.retain(|r| r.server != server);
            self.panes.prompts.listings.remove(&server);
        }
        effects
    }

    /// `resources/list_changed` or `prompts/list_changed`: list that server again.
    pub(super) fn content_list_changed(&mut self, server: &str, resources: bool) -> Vec<Effect> {
        let server = server.to_string();
        if resources {
            self.panes
                .resources
                .listings
                .insert(server.clone(), Listing::Loading);
            vec![Effect::ListResources { server }]
        } else {
            self.panes
                .prompts
                .listings
                .insert(server.clone(), Listing::Loading);
            vec![Effect::ListPrompts { server }]
        }
    }

    /// `resources/updated`: the row is marked; an open view of it is read again.
    pub(super) fn resource_updated(&mut self, server: &str, uri: &str) -> Vec<Effect> {
        for row in self
            .panes
            .resources
            .rows
            .iter_mut()
            .filter(|r| r.server == server && r.uri == uri && r.kind == RowKind::Resource)
        {
            row.updated = true;
        }
        match &mut self.overlays.modal {
            Some(Modal::Resource(view)) if view.server == server && view.uri == uri => {
                view.reloading();
                vec![Effect::ReadResource {
                    server: server.to_string(),
                    uri: uri.to_string(),
                }]
            }
            _ => Vec::new(),
        }
    }

    pub(super) fn resources_listed(
        &mut self,
        server: String,
        result: Result<ResourceListing, String>,
    ) {
        match result {
            Ok(listing) => {
                let order = self.server_order();
                self.panes.resources.take(&server, listing, &order);
                self.panes
                    .resources
                    .listings
                    .insert(server, Listing::Loaded);
            }
            Err(e) => {
                let e = sanitize_line(&e, 300);
                self.event(
                    &server,
                    EventKind::Notice,
                    format!("resources not listed: {e}"),
                );
                self.panes
                    .resources
                    .listings
                    .insert(server, Listing::Failed(e));
            }
        }
    }

    pub(super) fn prompts_listed(
        &mut self,
        server: String,
        result: Result<Vec<PromptInfo>, String>,
    ) {
        match result {
            Ok(prompts) => {
                let order = self.server_order();
                self.panes.prompts.take(&server, prompts, &order);
                self.panes.prompts.listings.insert(server, Listing::Loaded);
            }
            Err(e) => {
                let e = sanitize_line(&e, 300);
                self.event(
                    &server,
                    EventKind::Notice,
                    format!("prompts not listed: {e}"),
                );
                self.panes
                    .prompts
                    .listings
                    .insert(server, Listing::Failed(e));
            }
        }
    }

    /// A subscription change was answered.
    pub(super) fn subscription_set(
        &mut self,
        server: String,
        uri: String,
        on: bool,
        result: Result<(), String>,
    ) {
        let shown = sanitize_line(&uri, 120);
        match result {
            Ok(()) => {
                for row in self
                    .panes
                    .resources
                    .rows
                    .iter_mut()
                    .filter(|r| r.server == server && r.uri == uri)
                {
                    row.subscribed = on;
                }
                if let Some(Modal::Resource(view)) = &mut self.overlays.modal {
                    if view.server == server && view.uri == uri {
                        view.subscribed = on;
                    }
                }
                self.notify(
                    Level::Info,
                    if on {
                        format!(
                            "subscribed to {shown}: its updates are marked (and re-read when open)"
                        )
                    } else {
                        format!("unsubscribed from {shown}")
                    },
                );
            }
            Err(e) => self.notify(
                Level::Error,
                format!(
                    "{server}: {} {shown} failed: {}",
                    if on {
                        "subscribing to"
                    } else {
                        "unsubscribing from"
                    },
                    sanitize_line(&e, 200)
                ),
            ),
        }
    }

    /// The instructions of the selected server, sanitized, for the Details pane and its view.
    pub(super) fn selected_instructions(&self) -> Option<String> {
        self.selected_server()
            .and_then(|s| s.report.as_ref())
            .and_then(|r| r.instructions.as_deref())
            .map(|i| sanitize(i, true))
    }
}
