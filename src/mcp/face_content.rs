//! Resources, resource templates, prompts and completions of every ready server, passed through
//! the gateway to its hosts under the names and URIs `gateway.naming` gives them.
//!
//! Under a template with `{server}` a URI is offered as `aimon://<server>/<uri>` and a prompt as
//! the template names it, so neither can collide; a read or a get finds its server in the name.
//! Under `{tool}` alone they are offered as the servers gave them, and the gateway finds the
//! server by what it last listed (a resource, a template's fixed start, a prompt), listing
//! again on a miss. Nothing here is gated: resources and prompts are read, never called.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use base64::Engine;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult,
    Reference,
};
use rmcp::ErrorData;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::face_backend::{Backend, ContentKind};
use super::resources::{CompletionTarget, ResourceContent};
use crate::config::Naming;

/// What passing them through needs of the gateway.
pub(super) struct Content<'a> {
    pub(super) backend: &'a dyn Backend,
    pub(super) naming: &'a Naming,
    pub(super) routes: &'a Routes,
}

/// Where the offered URIs and prompt names lead, from the last listings (used when the names
/// do not say: `gateway.naming` without `{server}`).
#[derive(Default)]
pub(super) struct Routes {
    inner: Mutex<Known>,
}

#[derive(Default)]
struct Known {
    /// A resource's URI → its server.
    resources: HashMap<String, String>,
    /// A template's fixed start (before its first `{`) → its server.
    templates: Vec<(String, String)>,
    /// A prompt's offered name → its server and its own name.
    prompts: HashMap<String, (String, String)>,
}

impl Routes {
    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn typed<T: DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn failed(why: String) -> ErrorData {
    ErrorData::internal_error(why, None)
}

/// Every resource and template of every ready server that offers them; a server that cannot
/// list now is left out (and logged), not the whole list.
async fn listing(gateway: &Content<'_>) -> (Vec<Value>, Vec<Value>) {
    let naming = &gateway.naming;
    let mut resources = Vec::new();
    let mut templates = Vec::new();
    let mut known = Known::default();
    for server in gateway.backend.content_servers(ContentKind::Resources) {
        let (listed, listed_templates) = match gateway.backend.list_resources(&server).await {
            Ok(listing) => listing,
            Err(why) => {
                tracing::warn!(%server, %why, "gateway: a server's resources could not be listed");
                continue;
            }
        };
        for r in listed {
            known.resources.insert(r.uri.clone(), server.clone());
            resources.push(json!({
                "uri": naming.uri(&server, &r.uri),
                "name": naming.name(&server, &r.name),
                "title": r.title,
                "description": r.description,
                "mimeType": r.mime_type,
                "size": r.size,
            }));
        }
        for t in listed_templates {
            let start = super::uri_template::template_start(&t.uri_template);
            known.templates.push((start.to_string(), server.clone()));
            templates.push(json!({
                "uriTemplate": naming.uri(&server, &t.uri_template),
                "name": naming.name(&server, &t.name),
                "title": t.title,
                "description": t.description,
                "mimeType": t.mime_type,
            }));
        }
    }
    let mut routes = gateway.routes.known();
    routes.resources = known.resources;
    routes.templates = known.templates;
    (resources, templates)
}

pub(super) async fn list_resources(
    gateway: &Content<'_>,
) -> Result<ListResourcesResult, ErrorData> {
    let (resources, _) = listing(gateway).await;
    typed(json!({ "resources": resources }))
}

pub(super) async fn list_templates(
    gateway: &Content<'_>,
) -> Result<ListResourceTemplatesResult, ErrorData> {
    let (_, templates) = listing(gateway).await;
    typed(json!({ "resourceTemplates": templates }))
}

/// The server of offered `uri` (a resource's or a template's), and the URI as it knows it.
async fn route(gateway: &Content<'_>, uri: &str) -> Result<(String, String), ErrorData> {
    let unknown = || {
        ErrorData::resource_not_found(
            format!("no server of this gateway offers {uri} (resources/list says what there is)"),
            None,
        )
    };
    if gateway.naming.qualifies() {
        let (server, own) = uri
            .strip_prefix("aimon://")
            .and_then(|rest| rest.split_once('/'))
            .ok_or_else(unknown)?;
        return Ok((server.to_string(), own.to_string()));
    }
    let find = |known: &Known| {
        known.resources.get(uri).cloned().or_else(|| {
            known
                .templates
                .iter()
                .filter(|(start, _)| uri.starts_with(start.as_str()))
                .max_by_key(|(start, _)| start.len())
                .map(|(_, server)| server.clone())
        })
    };
    if let Some(server) = find(&gateway.routes.known()) {
        return Ok((server, uri.to_string()));
    }
    listing(gateway).await;
    let server = find(&gateway.routes.known()).ok_or_else(unknown)?;
    Ok((server, uri.to_string()))
}

pub(super) async fn read(
    gateway: &Content<'_>,
    uri: &str,
    cancel: CancellationToken,
) -> Result<ReadResourceResult, ErrorData> {
    let (server, own) = route(gateway, uri).await?;
    let contents = gateway
        .backend
        .read_resource(&server, &own, cancel)
        .await
        .map_err(failed)?;
    let naming = &gateway.naming;
    let contents: Vec<Value> = contents
        .into_iter()
        .map(|part| match part {
            ResourceContent::Text {
                uri,
                mime_type,
                text,
            } => json!({"uri": naming.uri(&server, &uri), "mimeType": mime_type, "text": text}),
            ResourceContent::Blob {
                uri,
                mime_type,
                bytes,
            } => json!({
                "uri": naming.uri(&server, &uri),
                "mimeType": mime_type,
                "blob": base64::engine::general_purpose::STANDARD.encode(bytes),
            }),
        })
        .collect();
    typed(json!({ "contents": contents }))
}

/// Subscribes to (`on`) or unsubscribes from offered `uri`: its server, and its URI there.
pub(super) async fn subscribe(
    gateway: &Content<'_>,
    uri: &str,
    on: bool,
) -> Result<(String, String), ErrorData> {
    let (server, own) = route(gateway, uri).await?;
    gateway
        .backend
        .subscribe(&server, &own, on)
        .await
        .map_err(failed)?;
    Ok((server, own))
}

pub(super) async fn list_prompts(gateway: &Content<'_>) -> Result<ListPromptsResult, ErrorData> {
    let mut prompts = Vec::new();
    let mut known = HashMap::new();
    for server in gateway.backend.content_servers(ContentKind::Prompts) {
        let listed = match gateway.backend.list_prompts(&server).await {
            Ok(listed) => listed,
            Err(why) => {
                tracing::warn!(%server, %why, "gateway: a server's prompts could not be listed");
                continue;
            }
        };
        for p in listed {
            let name = gateway.naming.name(&server, &p.name);
            if known.contains_key(&name) {
                continue;
            }
            let arguments: Vec<Value> = p
                .arguments
                .iter()
                .map(|a| {
                    json!({"name": a.name, "title": a.title, "description": a.description,
                       "required": a.required})
                })
                .collect();
            prompts.push(json!({
                "name": name, "title": p.title, "description": p.description,
                "arguments": arguments,
            }));
            known.insert(name, (server.clone(), p.name));
        }
    }
    gateway.routes.known().prompts = known;
    typed(json!({ "prompts": prompts }))
}

/// The server of offered prompt `name`, and the prompt's own name there.
async fn prompt_route(gateway: &Content<'_>, name: &str) -> Result<(String, String), ErrorData> {
    let known = |gateway: &Content<'_>| gateway.routes.known().prompts.get(name).cloned();
    if let Some(route) = known(gateway) {
        return Ok(route);
    }
    list_prompts(gateway).await?;
    known(gateway).ok_or_else(|| {
        ErrorData::invalid_params(
            format!("no prompt named {name} here (prompts/list says what there is)"),
            None,
        )
    })
}

pub(super) async fn get_prompt(
    gateway: &Content<'_>,
    request: GetPromptRequestParams,
    cancel: CancellationToken,
) -> Result<GetPromptResult, ErrorData> {
    let (server, own) = prompt_route(gateway, &request.name).await?;
    let arguments: BTreeMap<String, String> = request
        .arguments
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| match v {
            Value::String(s) => (k, s),
            other => (k, other.to_string()),
        })
        .collect();
    let got = gateway
        .backend
        .get_prompt(&server, &own, &arguments, cancel)
        .await
        .map_err(failed)?;
    let messages: Vec<Value> = got
        .messages
        .into_iter()
        .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
        .collect();
    typed(json!({"description": got.description, "messages": messages}))
}

pub(super) async fn complete(
    gateway: &Content<'_>,
    request: CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let (server, target) = match &request.r#ref {
        Reference::Prompt(prompt) => {
            let (server, own) = prompt_route(gateway, &prompt.name).await?;
            (server, CompletionTarget::Prompt(own))
        }
        Reference::Resource(template) => {
            let (server, own) = route(gateway, &template.uri).await?;
            (server, CompletionTarget::Template(own))
        }
        _ => {
            return Err(ErrorData::invalid_params(
                "completion/complete: a reference of a kind this gateway does not know",
                None,
            ))
        }
    };
    let context: BTreeMap<String, String> = request
        .context
        .and_then(|c| c.arguments)
        .unwrap_or_default()
        .into_iter()
        .collect();
    let completion = gateway
        .backend
        .complete(
            &server,
            &target,
            &request.argument.name,
            &request.argument.value,
            &context,
        )
        .await
        .map_err(failed)?;
    typed(json!({"completion": {
        "values": completion.values,
        "total": completion.total,
        "hasMore": completion.has_more,
    }}))
}
