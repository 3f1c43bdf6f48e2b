//! What the Resources and Prompts panes hold: each server's listing as rows, in config order,
//! with their subscription and "updated" marks, the selection; and the events the background
//! work for these panes brings back. Plain state: the handlers that ask for listings and keep
//! these rows following the servers are in `content.rs`, what Enter on a row does in
//! `content_open.rs`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::runtime::{
    PromptArgumentInfo, PromptInfo, PromptMessages, ResourceContent, ResourceListing,
};
use crate::text::sanitize_line;

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

/// A resource, a template, or a skill (its `SKILL.md`, loaded only as listed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RowKind {
    Resource,
    Template,
    Skill,
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
    pub(super) fn take(&mut self, server: &str, listing: ResourceListing, order: &[String]) {
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
        fresh.extend(listing.skills.into_iter().map(|s| {
            ResourceRow {
                server: server.to_string(),
                kind: RowKind::Skill,
                name: sanitize_line(&s.name, 100),
                shown_uri: sanitize_line(&s.uri, 300),
                size: s
                    .files
                    .as_ref()
                    .and_then(|files| files.iter().find(|f| f.uri == s.uri))
                    .map(|f| f.size),
                mime: match &s.files {
                    Some(files) => format!(
                        "skill, {} file{}",
                        files.len(),
                        crate::text::plural(files.len())
                    ),
                    None => "skill, dynamic".into(),
                },
                uri: s.uri,
                description: sanitize_line(&s.description, DESCRIPTION_CHARS),
                subscribed: false,
                updated: false,
            }
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

    pub(super) fn take(&mut self, server: &str, prompts: Vec<PromptInfo>, order: &[String]) {
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
