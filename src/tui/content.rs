//! What the Resources and Prompts panes hold, and how it follows the servers: each server's
//! listing is asked for when it becomes ready with the capability, again when it announces a
//! list change, and its rows keep their subscription and "updated" marks across listings. A
//! `resources/updated` marks its row and re-reads the resource if it is open.
//!
//! Separate from `state.rs` (servers, tools, calls, events) because these rows are fetched on
//! demand through effects rather than pushed by the runtime. What Enter on a row does is in
//! `content_open.rs`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::app::{App, Effect, Level};
use super::modals::Modal;
use super::state::EventKind;
use crate::runtime::{
    PromptArgumentInfo, PromptInfo, PromptMessages, ResourceContent, ResourceListing, ServerReport,
    ServerStatus,
};
use crate::text::{sanitize, sanitize_line};

/// Characters of a description kept on a row.
const DESCRIPTION_CHARS: usize = 300;

/// What the background work for these panes brings back.
#[derive(Debug)]
pub enum ContentEvent {
    /// A server's resources and templates were listed.
    ResourcesListed {
        server: String,
        result: Result<ResourceListing, String>,
    },
    /// A resource was read.
    ResourceRead {
        server: String,
        uri: String,
        result: Result<Vec<ResourceContent>, String>,
    },
    /// A subscription change was answered.
    Subscribed {
        server: String,
        uri: String,
        on: bool,
        result: Result<(), String>,
    },
    /// Completions for the form's request `seq`.
    Completed {
        seq: u64,
        result: Result<Vec<String>, String>,
    },
    /// A server's prompts were listed.
    PromptsListed {
        server: String,
        result: Result<Vec<PromptInfo>, String>,
    },
    /// A prompt's messages came.
    PromptGot {
        server: String,
        name: String,
        result: Result<PromptMessages, String>,
    },
    /// A save finished (or why it did not).
    Saved {
        path: PathBuf,
        result: Result<usize, String>,
    },
    /// `xdg-open` was started for a URL (or why not).
    UrlOpened {
        url: String,
        result: Result<(), String>,
    },
}

/// Where a server's listing stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Listing {
    Loading,
    Loaded,
    Failed(String),
}

/// A resource or a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RowKind {
    Resource,
    Template,
}

/// One row of the Resources pane.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceRow {
    pub server: String,
    pub kind: RowKind,
    /// The name (or title) to show, sanitized.
    pub name: String,
    /// The URI (or URI template) exactly as the server sent it: what goes back in requests.
    pub uri: String,
    /// The same, sanitized, to show.
    pub shown_uri: String,
    pub mime: String,
    pub size: Option<u64>,
    pub description: String,
    pub subscribed: bool,
    /// `resources/updated` arrived since it was last read.
    pub updated: bool,
}

/// One row of the Prompts pane.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptRow {
    pub server: String,
    /// The name exactly as sent (what goes back in `prompts/get`).
    pub name: String,
    pub shown_name: String,
    pub description: String,
    /// Sanitized copies of the arguments (their names as sent are kept in `raw_args`).
    pub arguments: Vec<PromptArgumentInfo>,
    pub raw_args: Vec<String>,
}

/// The Resources pane.
#[derive(Debug, Default)]
pub struct ResourcesPane {
    pub rows: Vec<ResourceRow>,
    pub listings: BTreeMap<String, Listing>,
    pub selected: usize,
}

/// The Prompts pane.
#[derive(Debug, Default)]
pub struct PromptsPane {
    pub rows: Vec<PromptRow>,
    pub listings: BTreeMap<String, Listing>,
    pub selected: usize,
}

impl ResourcesPane {
    pub fn selected_row(&self) -> Option<&ResourceRow> {
        self.rows.get(self.selected)
    }

    /// Replaces `server`'s rows with a new listing (after those of servers earlier in
    /// `order`), keeping each URI's marks.
    fn take(&mut self, server: &str, listing: ResourceListing, order: &[String]) {
        let marks: BTreeMap<(RowKind, String), (bool, bool)> = self
            .rows
            .iter()
            .filter(|r| r.server == server)
            .map(|r| ((r.kind, r.uri.clone()), (r.subscribed, r.updated)))
            .collect();
        let mut fresh: Vec<ResourceRow> = listing
            .resources
            .into_iter()
            .map(|r| ResourceRow {
                server: server.to_string(),
                kind: RowKind::Resource,
                name: sanitize_line(r.title.as_deref().unwrap_or(&r.name), 100),
                shown_uri: sanitize_line(&r.uri, 300),
                uri: r.uri,
                mime: sanitize_line(r.mime_type.as_deref().unwrap_or(""), 60),
                size: r.size,
                description: sanitize_line(
                    r.description.as_deref().unwrap_or(""),
                    DESCRIPTION_CHARS,
                ),
                subscribed: false,
                updated: false,
            })
            .collect();
        fresh.extend(listing.templates.into_iter().map(|t| ResourceRow {
            server: server.to_string(),
            kind: RowKind::Template,
            name: sanitize_line(t.title.as_deref().unwrap_or(&t.name), 100),
            shown_uri: sanitize_line(&t.uri_template, 300),
            uri: t.uri_template,
            mime: sanitize_line(t.mime_type.as_deref().unwrap_or(""), 60),
            size: None,
            description: sanitize_line(t.description.as_deref().unwrap_or(""), DESCRIPTION_CHARS),
            subscribed: false,
            updated: false,
        }));
        for row in &mut fresh {
            if let Some((subscribed, updated)) = marks.get(&(row.kind, row.uri.clone())) {
                row.subscribed = *subscribed;
                row.updated = *updated;
            }
        }
        self.rows.retain(|r| r.server != server);
        let at = self
            .rows
            .iter()
            .position(|r| rank(order, &r.server) > rank(order, server))
            .unwrap_or(self.rows.len());
        self.rows.splice(at..at, fresh);
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }
}

impl PromptsPane {
    pub fn selected_row(&self) -> Option<&PromptRow> {
        self.rows.get(self.selected)
    }

    fn take(&mut self, server: &str, prompts: Vec<PromptInfo>, order: &[String]) {
        let fresh: Vec<PromptRow> = prompts
            .into_iter()
            .map(|p| PromptRow {
                server: server.to_string(),
                shown_name: sanitize_line(&p.name, 100),
                description: sanitize_line(
                    p.description
                        .as_deref()
                        .or(p.title.as_deref())
                        .unwrap_or(""),
                    DESCRIPTION_CHARS,
                ),
                raw_args: p.arguments.iter().map(|a| a.name.clone()).collect(),
                arguments: p
                    .arguments
                    .iter()
                    .map(|a| PromptArgumentInfo {
                        name: sanitize_line(&a.name, 60),
                        title: a.title.as_deref().map(|t| sanitize_line(t, 60)),
                        description: a.description.as_deref().map(|d| sanitize_line(d, 200)),
                        required: a.required,
                    })
                    .collect(),
                name: p.name,
            })
            .collect();
        self.rows.retain(|r| r.server != server);
        let at = self
            .rows
            .iter()
            .position(|r| rank(order, &r.server) > rank(order, server))
            .unwrap_or(self.rows.len());
        self.rows.splice(at..at, fresh);
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }
}

/// Where `server` is in the config order (unknown ones last).
fn rank(order: &[String], server: &str) -> usize {
    order
        .iter()
        .position(|s| s == server)
        .unwrap_or(order.len())
}

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
        // Without a runtime yet, nothing can be asked: its arrival asks for every ready server.
        if report.status != ServerStatus::Ready || self.runtime().is_none() {
            return effects;
        }
        let caps = report.capabilities.clone().unwrap_or_default();
        if caps.resources.is_some() {
            self.resources
                .listings
                .insert(server.clone(), Listing::Loading);
            effects.push(Effect::ListResources {
                server: server.clone(),
            });
            for row in self
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
            self.resources.rows.retain(|r| r.server != server);
            self.resources.listings.remove(&server);
        }
        if caps.prompts.is_some() {
            self.prompts
                .listings
                .insert(server.clone(), Listing::Loading);
            effects.push(Effect::ListPrompts { server });
        } else {
            self.prompts.rows.retain(|r| r.server != server);
            self.prompts.listings.remove(&server);
        }
        effects
    }

    /// `resources/list_changed` or `prompts/list_changed`: list that server again.
    pub(super) fn content_list_changed(&mut self, server: &str, resources: bool) -> Vec<Effect> {
        let server = server.to_string();
        if resources {
            self.resources
                .listings
                .insert(server.clone(), Listing::Loading);
            vec![Effect::ListResources { server }]
        } else {
            self.prompts
                .listings
                .insert(server.clone(), Listing::Loading);
            vec![Effect::ListPrompts { server }]
        }
    }

    /// `resources/updated`: the row is marked; an open view of it is read again.
    pub(super) fn resource_updated(&mut self, server: &str, uri: &str) -> Vec<Effect> {
        for row in self
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
                self.resources.take(&server, listing, &order);
                self.resources.listings.insert(server, Listing::Loaded);
            }
            Err(e) => {
                let e = sanitize_line(&e, 300);
                self.event(
                    &server,
                    EventKind::Notice,
                    format!("resources not listed: {e}"),
                );
                self.resources.listings.insert(server, Listing::Failed(e));
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
                self.prompts.take(&server, prompts, &order);
                self.prompts.listings.insert(server, Listing::Loaded);
            }
            Err(e) => {
                let e = sanitize_line(&e, 300);
                self.event(
                    &server,
                    EventKind::Notice,
                    format!("prompts not listed: {e}"),
                );
                self.prompts.listings.insert(server, Listing::Failed(e));
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
