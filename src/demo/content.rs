//! The demo server's resources and prompts: a readme (text), a logo (a PNG blob), every note as
//! `demo://notes/{title}` (also a template, with completions over the titles), generated
//! resources for `--extra-resources` (listed in pages), and the prompts `summarize` (a note,
//! with completions) and `hello` (and `greet` with `--live-tools`, `ask.rs`). Subscriptions: `subscriptions/listen` on 2026-07-28 sessions,
//! `resources/subscribe` on older ones; writing or deleting a note sends
//! `notifications/resources/updated` for it and `notifications/resources/list_changed`.
//!
//! Separate from the handler so the handler stays the dispatch table; under `--evil` the text
//! here carries escape sequences too.

// Subscribe and logging are SEP-2577-deprecated / legacy in rmcp; the demo still speaks them.
#![allow(deprecated)]

use std::collections::BTreeSet;

use base64::Engine;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ContentBlock, GetPromptRequestParams,
    GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams,
    ReadResourceResult, Reference, Resource, ResourceContents, ResourceTemplate,
    ResourceUpdatedNotificationParam, Role,
};
use rmcp::service::SubscriptionSink;
use rmcp::{ErrorData, Peer, RoleServer};

use super::{DemoServer, EVIL};

/// Resources listed per page of `resources/list`.
pub const RESOURCE_PAGE: usize = 50;
/// The URI template of a note.
pub const NOTE_TEMPLATE: &str = "demo://notes/{title}";
const NOTE_PREFIX: &str = "demo://notes/";
const README_URI: &str = "demo://readme";
const LOGO_URI: &str = "demo://logo.png";
const EXTRA_PREFIX: &str = "demo://extra/";

/// A 1×1 PNG (one teal pixel).
const LOGO_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0x60, 0xa8, 0xa8, 0x00,
    0x00, 0x01, 0x84, 0x00, 0xc3, 0x5b, 0x25, 0x0e, 0x95, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

/// Who listens for resource updates: 2026-07-28 `subscriptions/listen` streams, and the URIs
/// older sessions subscribed to with `resources/subscribe`.
#[derive(Default)]
pub(super) struct Listeners {
    streams: Vec<SubscriptionSink>,
    legacy: BTreeSet<String>,
}

/// The URI of the note called `title`.
pub(super) fn note_uri(title: &str) -> String {
    let mut uri = String::from(NOTE_PREFIX);
    for b in title.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// The title a note URI names (percent-decoded); `None` when it is not a note URI.
fn note_title(uri: &str) -> Option<String> {
    let encoded = uri.strip_prefix(NOTE_PREFIX)?;
    let mut bytes = Vec::with_capacity(encoded.len());
    let mut rest = encoded.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' && tail.len() >= 2 {
            let hex = std::str::from_utf8(&tail[..2]).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

fn text_resource(uri: &str, name: &str, mime: &str, description: &str) -> Resource {
    Resource::new(uri, name)
        .with_mime_type(mime)
        .with_description(description)
}

impl DemoServer {
    /// Text the client shows: with `--evil`, wrapped in escape sequences.
    fn shown(&self, text: &str) -> String {
        if self.opts.evil {
            format!("{EVIL}{text}{EVIL}")
        } else {
            text.to_string()
        }
    }

    /// Every resource, in listing order.
    fn all_resources(&self) -> Vec<Resource> {
        let mut all = vec![
            text_resource(
                README_URI,
                "README",
                "text/markdown",
                &self.shown("What this demo server offers."),
            ),
            Resource::new(LOGO_URI, "logo")
                .with_mime_type("image/png")
                .with_description("A 1x1 PNG (a blob resource).")
                .with_size(LOGO_PNG.len() as u64),
        ];
        for (title, body) in self.notes().iter() {
            all.push(
                Resource::new(note_uri(title), title.clone())
                    .with_mime_type("text/plain")
                    .with_description("A note (write_note / delete_note change it).")
                    .with_size(body.len() as u64),
            );
        }
        for i in 0..self.opts.extra_resources {
            all.push(text_resource(
                &format!("{EXTRA_PREFIX}{i}"),
                &format!("extra {i}"),
                "text/plain",
                "A generated resource (--extra-resources).",
            ));
        }
        all
    }

    /// One page of `resources/list`: the cursor is the index of the page's first resource.
    pub(super) fn list_resources_page(
        &self,
        request: Option<PaginatedRequestParams>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let all = self.all_resources();
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|i| *i <= all.len())
                .ok_or_else(|| ErrorData::invalid_params("unknown cursor", None))?,
        };
        let end = (start + RESOURCE_PAGE).min(all.len());
        let mut page = ListResourcesResult::with_all_items(all[start..end].to_vec());
        if end < all.len() {
            page.next_cursor = Some(end.to_string());
        }
        Ok(page)
    }

    pub(super) fn list_templates(&self) -> ListResourceTemplatesResult {
        let mut template = ResourceTemplate::new(NOTE_TEMPLATE, "note");
        template.mime_type = Some("text/plain".into());
        template.description =
            Some(self.shown("A note by its title (completions offer the titles)."));
        ListResourceTemplatesResult::with_all_items(vec![template])
    }

    pub(super) fn read(
        &self,
        request: ReadResourceRequestParams,
    ) -> Result<ReadResourceResult, ErrorData> {
        let uri = request.uri;
        let contents = if uri == README_URI {
            ResourceContents::text(
                self.shown(
                    "# aimon demo server\n\nTools: echo, add, write_note, delete_note, slow.\n\
                     Every note is a resource (demo://notes/{title}); subscribe to one and \
                     write it again to see resources/updated.\n",
                ),
                &uri,
            )
            .with_mime_type("text/markdown")
        } else if uri == LOGO_URI {
            ResourceContents::blob(
                base64::engine::general_purpose::STANDARD.encode(LOGO_PNG),
                &uri,
            )
            .with_mime_type("image/png")
        } else if let Some(i) = uri
            .strip_prefix(EXTRA_PREFIX)
            .and_then(|i| i.parse::<usize>().ok())
            .filter(|i| *i < self.opts.extra_resources)
        {
            ResourceContents::text(format!("extra resource {i}"), &uri)
        } else if let Some(body) = note_title(&uri).and_then(|t| self.notes().get(&t).cloned()) {
            ResourceContents::text(self.shown(&body), &uri)
        } else {
            return Err(ErrorData::resource_not_found(
                format!("no resource {uri}"),
                None,
            ));
        };
        Ok(ReadResourceResult::new(vec![contents]))
    }

    pub(super) fn prompts(&self) -> ListPromptsResult {
        ListPromptsResult::with_all_items(
            [
                Prompt::new(
                    "summarize",
                    Some(self.shown("Summarize a note.")),
                    Some(vec![
                        PromptArgument::new("title")
                            .with_description("The note (completions offer the titles).")
                            .with_required(true),
                        PromptArgument::new("style")
                            .with_description("short or detailed (default short).")
                            .with_required(false),
                    ]),
                ),
                Prompt::new("hello", Some("A greeting, no arguments."), None),
            ]
            .into_iter()
            .chain(self.opts.live_tools.then(DemoServer::greet_prompt))
            .collect(),
        )
    }

    pub(super) fn prompt(
        &self,
        request: GetPromptRequestParams,
    ) -> Result<GetPromptResult, ErrorData> {
        let arg = |name: &str| {
            request
                .arguments
                .as_ref()
                .and_then(|a| a.get(name))
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        match request.name.as_str() {
            "hello" => Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                Role::User,
                self.shown("Say hello to the operator."),
            )])
            .with_description("A greeting.")),
            "summarize" => {
                let title = arg("title")
                    .ok_or_else(|| ErrorData::invalid_params("summarize needs a title", None))?;
                let style = arg("style").unwrap_or_else(|| "short".into());
                let body = self.notes().get(&title).cloned().ok_or_else(|| {
                    ErrorData::invalid_params(format!("no note titled \"{title}\""), None)
                })?;
                let uri = note_uri(&title);
                Ok(GetPromptResult::new(vec![
                    PromptMessage::new_text(
                        Role::User,
                        self.shown(&format!("Summarize the note \"{title}\" ({style}):")),
                    ),
                    PromptMessage::new(
                        Role::User,
                        ContentBlock::resource(
                            ResourceContents::text(self.shown(&body), uri)
                                .with_mime_type("text/plain"),
                        ),
                    ),
                ])
                .with_description(format!("Summarize {title}")))
            }
            other => Err(ErrorData::invalid_params(
                format!("no prompt named {other}"),
                None,
            )),
        }
    }

    /// `completion/complete`: note titles for the note template and `summarize`'s `title`,
    /// the styles for its `style`.
    pub(super) fn completions(&self, request: CompleteRequestParams) -> CompleteResult {
        let typed = request.argument.value.as_str();
        let values: Vec<String> = match (&request.r#ref, request.argument.name.as_str()) {
            (Reference::Resource(r), "title") if r.uri == NOTE_TEMPLATE => {
                self.notes().keys().cloned().collect()
            }
            (Reference::Prompt(p), "title") if p.name == "summarize" => {
                self.notes().keys().cloned().collect()
            }
            (Reference::Prompt(p), "style") if p.name == "summarize" => {
                vec!["short".into(), "detailed".into()]
            }
            _ => Vec::new(),
        };
        let mut values: Vec<String> = values
            .into_iter()
            .filter(|v| v.starts_with(typed))
            .collect();
        values.truncate(CompletionInfo::MAX_VALUES);
        CompleteResult::new(CompletionInfo::with_all_values(values).unwrap_or_default())
    }

    /// A 2026-07-28 subscription stream opened: it hears every update until it closes.
    pub(super) fn add_stream(&self, sink: SubscriptionSink) {
        self.listeners().streams.push(sink);
    }

    /// A subscription stream closed.
    pub(super) fn remove_stream(&self, sink: &SubscriptionSink) {
        self.listeners().streams.retain(|s| s.id() != sink.id());
    }

    /// `resources/subscribe` (sessions before 2026-07-28).
    pub(super) fn subscribe_legacy(&self, uri: String, on: bool) {
        let mut listeners = self.listeners();
        if on {
            listeners.legacy.insert(uri);
        } else {
            listeners.legacy.remove(&uri);
        }
    }

    /// A note changed: `resources/updated` to whoever subscribed to it, and the resource list
    /// changed. Best effort: a listener that is gone is skipped.
    pub(super) async fn note_changed(&self, peer: &Peer<RoleServer>, title: &str) {
        let uri = note_uri(title);
        let (streams, legacy) = {
            let listeners = self.listeners();
            (listeners.streams.clone(), listeners.legacy.contains(&uri))
        };
        for stream in &streams {
            let wanted = stream
                .accepted()
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.contains(&uri));
            if wanted {
                let _ = stream.notify_resource_updated(uri.clone()).await;
            }
            if stream.accepted().resources_list_changed == Some(true) {
                let _ = stream.notify_resource_list_changed().await;
            }
        }
        if legacy {
            let _ = peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await;
        }
        if streams.is_empty() {
            let _ = peer.notify_resource_list_changed().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn note_uris_round_trip() {
        for title in ["plain", "with space", "ü/?#%"] {
            assert_eq!(note_title(&note_uri(title)).as_deref(), Some(title));
        }
        assert_eq!(note_uri("a b"), "demo://notes/a%20b");
        assert_eq!(note_title("demo://other/x"), None);
    }

    #[test]
    fn the_logo_is_a_png() {
        assert!(LOGO_PNG.starts_with(b"\x89PNG\r\n\x1a\n"));
    }
}
