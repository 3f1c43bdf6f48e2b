//! `McpResourceClient`: a server's resources and resource templates (all pages), reading one,
//! subscribing to its updates, and `completion/complete` for template and prompt arguments.
//!
//! An interface of its own beside `McpClient` (docs/ARCHITECTURE.md §3: `McpClient` does not grow),
//! implemented for the rmcp-backed client over the same bounded request path as `tools/call`
//! (deadline, cancel). Subscriptions speak both eras: `resources/subscribe` to servers before
//! 2026-07-28, one `subscriptions/listen` request carrying every subscribed URI to those after.

// Subscribe/unsubscribe are legacy (before 2026-07-28) in rmcp; the servers of today use them.
#![allow(deprecated)]

use std::collections::BTreeMap;

use base64::Engine;
use rmcp::model::{
    ArgumentInfo, ClientRequest, CompleteRequest, CompleteRequestParams, CompletionContext,
    ListResourceTemplatesRequest, ListResourcesRequest, PaginatedRequestParams,
    ReadResourceRequestParams, Reference, ResourceContents, ServerResult, SubscribeRequest,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequest, UnsubscribeRequestParams,
};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::client::{DefaultMcpClient, McpClient, McpError, Retried};
use crate::tool::ProgressSink;

/// Most pages of a listing followed before giving up (a server looping on cursors).
const MAX_PAGES: usize = 1_000;
/// The first protocol revision whose subscriptions go through `subscriptions/listen`.
const LISTEN_ERA: &str = "2026-07-28";

/// One resource a server lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceInfo {
    pub server: String,
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    /// Its size in bytes, when the server says.
    pub size: Option<u64>,
}

/// One resource template a server lists (RFC 6570 URI template).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TemplateInfo {
    pub server: String,
    pub uri_template: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

/// One part of what `resources/read` returned.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceContent {
    Text {
        uri: String,
        mime_type: Option<String>,
        text: String,
    },
    /// Decoded from the base64 the server sent.
    Blob {
        uri: String,
        mime_type: Option<String>,
        bytes: Vec<u8>,
    },
}

impl ResourceContent {
    pub fn uri(&self) -> &str {
        match self {
            ResourceContent::Text { uri, .. } | ResourceContent::Blob { uri, .. } => uri,
        }
    }

    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContent::Text { mime_type, .. } | ResourceContent::Blob { mime_type, .. } => {
                mime_type.as_deref()
            }
        }
    }
}

/// What a completion is asked for: a prompt's argument, or a resource template's variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionTarget {
    /// `ref/prompt` by the prompt's name.
    Prompt(String),
    /// `ref/resource` by the template's URI template.
    Template(String),
}

/// Suggestions for one argument (`completion/complete`), at most 100.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Completion {
    pub values: Vec<String>,
    /// How many there are in all, when the server says.
    pub total: Option<u32>,
    /// The server has more than it sent.
    pub has_more: bool,
}

/// Resources of one server, behind the same deadlines as its tool calls.
#[async_trait::async_trait]
pub trait McpResourceClient: Send + Sync {
    /// The configured server name.
    fn server(&self) -> &str;
    /// Every resource, following `nextCursor` over all pages.
    async fn list_resources(&self) -> Result<Vec<ResourceInfo>, McpError>;
    /// Every resource template, following `nextCursor` over all pages.
    async fn list_resource_templates(&self) -> Result<Vec<TemplateInfo>, McpError>;
    /// Reads one resource; cancelling `cancel` sends `notifications/cancelled` and ends it.
    async fn read_resource(
        &self,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<Vec<ResourceContent>, McpError>;
    /// Asks for `notifications/resources/updated` when `uri` changes.
    async fn subscribe(&self, uri: &str) -> Result<(), McpError>;
    /// Stops the updates of `uri`.
    async fn unsubscribe(&self, uri: &str) -> Result<(), McpError>;
    /// The URIs subscribed to on this session.
    async fn subscribed(&self) -> Vec<String>;
    /// Suggestions for `argument` of `target` given what was typed (`value`) and the other
    /// arguments filled in so far (`context`).
    async fn complete(
        &self,
        target: &CompletionTarget,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Result<Completion, McpError>;
}

/// A paginated listing request for `cursor`.
pub(super) fn paged(cursor: Option<String>) -> Option<PaginatedRequestParams> {
    cursor.map(|c| {
        let mut params = PaginatedRequestParams::default();
        params.cursor = Some(c);
        params
    })
}

impl DefaultMcpClient {
    /// Every item of a paginated listing: `request` builds a page's request from its cursor,
    /// `page` takes the items and the next cursor out of the answer.
    pub(super) async fn all_pages<T>(
        &self,
        what: &str,
        request: impl Fn(Option<String>) -> ClientRequest,
        page: impl Fn(ServerResult) -> Option<(Vec<T>, Option<String>)>,
    ) -> Result<Vec<T>, McpError> {
        let mut items = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let answer = self
                .request(request(cursor.take()), None, ProgressSink::none())
                .await?;
            let Some((more, next)) = page(answer) else {
                return Err(McpError::Protocol(format!(
                    "{what} was answered with something other than its list"
                )));
            };
            items.extend(more);
            match next {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => return Ok(items),
            }
        }
        Err(McpError::Protocol(format!(
            "{what} did not end after {MAX_PAGES} pages"
        )))
    }

    /// Whether this session subscribes through `subscriptions/listen` (2026-07-28 and later).
    fn listens(&self) -> bool {
        self.identity().protocol_version.as_str() >= LISTEN_ERA
    }

    /// Replaces the session's `subscriptions/listen` request with one carrying `uris` (none
    /// when empty). The old request is cancelled first.
    async fn relisten(
        &self,
        subscriptions: &mut super::session::Subscriptions,
    ) -> Result<(), McpError> {
        if let Some(old) = subscriptions.listen.take() {
            old.abort();
        }
        if subscriptions.uris.is_empty() {
            return Ok(());
        }
        let filter = SubscriptionFilter::builder()
            .resources_list_changed()
            .resource_subscriptions(subscriptions.uris.iter().cloned())
            .build();
        let listen = self.peer().listen(filter);
        let mut stream = match tokio::time::timeout(self.request_timeout(), listen).await {
            Err(_) => return Err(McpError::Timeout(self.request_timeout())),
            Ok(Err(e)) => return Err(McpError::Protocol(format!("subscriptions/listen: {e}"))),
            Ok(Ok(stream)) => stream,
        };
        // What the stream carries was reported by the tap already, in wire order; draining it
        // keeps rmcp's channel from filling up.
        subscriptions.listen = Some(tokio::spawn(async move {
            while let Ok(Some(_)) = stream.next().await {}
        }));
        Ok(())
    }
}

/// The text of a `resources/read` part, or its bytes decoded.
fn content(part: ResourceContents) -> Result<ResourceContent, McpError> {
    match part {
        ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            ..
        } => Ok(ResourceContent::Text {
            uri,
            mime_type,
            text,
        }),
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob.trim())
                .map_err(|e| {
                    McpError::Protocol(format!(
                        "the blob of {} is not base64: {e}",
                        crate::text::sanitize_line(&uri, 200)
                    ))
                })?;
            Ok(ResourceContent::Blob {
                uri,
                mime_type,
                bytes,
            })
        }
        // rmcp's enum is non-exhaustive: say what arrived rather than nothing.
        other => Ok(ResourceContent::Text {
            uri: serde_json::to_value(&other)
                .ok()
                .and_then(|v| v.get("uri").and_then(|u| u.as_str()).map(str::to_string))
                .unwrap_or_default(),
            mime_type: None,
            text: "[content of an unknown kind]".into(),
        }),
    }
}

#[async_trait::async_trait]
impl McpResourceClient for DefaultMcpClient {
    fn server(&self) -> &str {
        McpClient::server(self)
    }

    async fn list_resources(&self) -> Result<Vec<ResourceInfo>, McpError> {
        let server = McpClient::server(self).to_string();
        let resources = self
            .all_pages(
                "resources/list",
                |cursor| {
                    ClientRequest::ListResourcesRequest(ListResourcesRequest {
                        params: paged(cursor),
                        ..Default::default()
                    })
                },
                |answer| match answer {
                    ServerResult::ListResourcesResult(page) => {
                        Some((page.resources, page.next_cursor))
                    }
                    _ => None,
                },
            )
            .await?;
        Ok(resources
            .into_iter()
            .map(|r| ResourceInfo {
                server: server.clone(),
                uri: r.uri.clone(),
                name: r.name.clone(),
                title: r.title.clone(),
                description: r.description.clone(),
                mime_type: r.mime_type.clone(),
                size: r.size,
            })
            .collect())
    }

    async fn list_resource_templates(&self) -> Result<Vec<TemplateInfo>, McpError> {
        let server = McpClient::server(self).to_string();
        let templates = self
            .all_pages(
                "resources/templates/list",
                |cursor| {
                    ClientRequest::ListResourceTemplatesRequest(ListResourceTemplatesRequest {
                        params: paged(cursor),
                        ..Default::default()
                    })
                },
                |answer| match answer {
                    ServerResult::ListResourceTemplatesResult(page) => {
                        Some((page.resource_templates, page.next_cursor))
                    }
                    _ => None,
                },
            )
            .await?;
        Ok(templates
            .into_iter()
            .map(|t| TemplateInfo {
                server: server.clone(),
                uri_template: t.uri_template.clone(),
                name: t.name.clone(),
                title: t.title.clone(),
                description: t.description.clone(),
                mime_type: t.mime_type.clone(),
            })
            .collect())
    }

    async fn read_resource(
        &self,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<Vec<ResourceContent>, McpError> {
        let request = Retried::Read(ReadResourceRequestParams::new(uri));
        match self
            .request_answering(request, &cancel, ProgressSink::none())
            .await?
        {
            ServerResult::ReadResourceResult(result) => {
                result.contents.into_iter().map(content).collect()
            }
            _ => Err(McpError::Protocol(
                "resources/read was answered with something other than contents".into(),
            )),
        }
    }

    async fn subscribe(&self, uri: &str) -> Result<(), McpError> {
        let mut subscriptions = self.links().subscriptions.lock().await;
        // Wanted before the request goes: an update may come before its answer.
        let was_wanted = subscriptions.uris.contains(uri);
        self.links().want_updates(uri, true);
        let outcome = if self.listens() {
            let added = subscriptions.uris.insert(uri.to_string());
            let outcome = self.relisten(&mut subscriptions).await;
            if outcome.is_err() && added {
                subscriptions.uris.remove(uri);
            }
            outcome
        } else {
            let request = ClientRequest::SubscribeRequest(SubscribeRequest::new(
                SubscribeRequestParams::new(uri),
            ));
            let outcome = self.request(request, None, ProgressSink::none()).await;
            if outcome.is_ok() {
                subscriptions.uris.insert(uri.to_string());
            }
            outcome.map(|_| ())
        };
        if outcome.is_err() && !was_wanted {
            self.links().want_updates(uri, false);
        }
        outcome
    }

    async fn unsubscribe(&self, uri: &str) -> Result<(), McpError> {
        let mut subscriptions = self.links().subscriptions.lock().await;
        // No update is wanted any more, even one already on its way.
        self.links().want_updates(uri, false);
        if self.listens() {
            subscriptions.uris.remove(uri);
            return self.relisten(&mut subscriptions).await;
        }
        let request = ClientRequest::UnsubscribeRequest(UnsubscribeRequest::new(
            UnsubscribeRequestParams::new(uri),
        ));
        // Forgotten here whatever the server says: no update is wanted any more.
        subscriptions.uris.remove(uri);
        self.request(request, None, ProgressSink::none())
            .await
            .map(|_| ())
    }

    async fn subscribed(&self) -> Vec<String> {
        self.links()
            .subscriptions
            .lock()
            .await
            .uris
            .iter()
            .cloned()
            .collect()
    }

    async fn complete(
        &self,
        target: &CompletionTarget,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Result<Completion, McpError> {
        let reference = match target {
            CompletionTarget::Prompt(name) => Reference::for_prompt(name.clone()),
            CompletionTarget::Template(template) => Reference::for_resource(template.clone()),
        };
        let mut params = CompleteRequestParams::new(reference, ArgumentInfo::new(argument, value));
        if !context.is_empty() {
            params = params.with_context(CompletionContext::with_arguments(
                context
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ));
        }
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(params));
        match self.request(request, None, ProgressSink::none()).await? {
            ServerResult::CompleteResult(result) => {
                let mut values = result.completion.values;
                values.truncate(100);
                Ok(Completion {
                    values,
                    total: result.completion.total,
                    has_more: result.completion.has_more.unwrap_or(false),
                })
            }
            _ => Err(McpError::Protocol(
                "completion/complete was answered with something other than a completion".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_blobs_and_refuses_what_is_not_base64() {
        let blob = ResourceContents::BlobResourceContents {
            uri: "a://b".into(),
            mime_type: Some("image/png".into()),
            blob: "aGk=".into(),
            meta: None,
        };
        assert_eq!(
            content(blob).unwrap(),
            ResourceContent::Blob {
                uri: "a://b".into(),
                mime_type: Some("image/png".into()),
                bytes: b"hi".to_vec()
            }
        );
        let bad = ResourceContents::BlobResourceContents {
            uri: "a://\x1b[2Jb".into(),
            mime_type: None,
            blob: "!!".into(),
            meta: None,
        };
        let err = content(bad).unwrap_err().to_string();
        assert!(err.contains("not base64"), "{err}");
        assert!(!err.contains('\x1b'), "{err}");
    }
}
