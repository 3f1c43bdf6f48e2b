//! The servers' resources, skills and prompts for a console (docs/daemon.md): listed, read and
//! got through the daemon's runtime, in the JSON the headless commands print (`resources
//! --json`, `read --json`, `prompts --json`, `prompt --json`); a resource's updates
//! subscribed to (they come to every console as `resource_updated` events); and the level of
//! the log messages a server sends. The agent's `prompt` is another thing: a server's prompt is got
//! with `get_prompt`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::hub::Hub;
use super::wire::code;
use crate::runtime::{resource_content_json, CompletionTarget, ContentError, LogLevel};

type Reply = Result<Value, (i64, String)>;

/// The methods answered here.
pub const METHODS: [&str; 7] = [
    "resources",
    "read",
    "subscribe",
    "complete",
    "prompts",
    "get_prompt",
    "set_log_level",
];

/// Answers `method` (one of [`METHODS`]).
pub async fn answer(hub: Arc<Hub>, method: String, params: Value) -> Reply {
    match method.as_str() {
        "resources" => resources(hub, params).await,
        "read" => read(hub, params).await,
        "subscribe" => subscribe(hub, params).await,
        "complete" => complete(hub, params).await,
        "prompts" => prompts(hub, params).await,
        "get_prompt" => get_prompt(hub, params).await,
        "set_log_level" => set_log_level(hub, params).await,
        other => Err((code::METHOD_NOT_FOUND, format!("no method {other:?}"))),
    }
}

/// `params[key]`, a string.
fn text<'a>(params: &'a Value, key: &str) -> Result<&'a str, (i64, String)> {
    params
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| (code::INVALID_PARAMS, format!("`{key}` is a string")))
}

/// `params[key]`, an object of strings (none: empty).
fn strings(params: &Value, key: &str) -> Result<BTreeMap<String, String>, (i64, String)> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(given) => serde_json::from_value(given.clone()).map_err(|_| {
            (
                code::INVALID_PARAMS,
                format!("`{key}` is an object of strings"),
            )
        }),
    }
}

fn failed(e: ContentError) -> (i64, String) {
    let code = match e {
        ContentError::UnknownServer(_) => code::NOT_FOUND,
        _ => code::CONTENT_FAILED,
    };
    (code, e.to_string())
}

/// `resources {server}`: its resources, templates and skills.
async fn resources(hub: Arc<Hub>, params: Value) -> Reply {
    let server = text(&params, "server")?;
    let listing = hub.runtime.list_resources(server).await.map_err(failed)?;
    serde_json::to_value(listing).map_err(|e| (code::CONTENT_FAILED, e.to_string()))
}

/// `read {server, uri, skill}`: a resource's contents, or (`skill: true`) a skill's
/// `SKILL.md`, verified against its listing.
async fn read(hub: Arc<Hub>, params: Value) -> Reply {
    let (server, uri) = (text(&params, "server")?, text(&params, "uri")?);
    let cancel = CancellationToken::new();
    let contents = match params.get("skill").and_then(Value::as_bool) {
        Some(true) => hub.runtime.read_skill_file(server, uri, cancel).await,
        _ => hub.runtime.read_resource(server, uri, cancel).await,
    }
    .map_err(failed)?;
    let contents: Vec<Value> = contents.iter().map(resource_content_json).collect();
    Ok(json!({ "contents": contents }))
}

/// `prompts {server}`: its prompts.
async fn prompts(hub: Arc<Hub>, params: Value) -> Reply {
    let server = text(&params, "server")?;
    let prompts = hub.runtime.list_prompts(server).await.map_err(failed)?;
    Ok(json!({ "prompts": prompts }))
}

/// `get_prompt {server, name, arguments}`: a prompt's messages (`arguments` are strings).
async fn get_prompt(hub: Arc<Hub>, params: Value) -> Reply {
    let (server, name) = (text(&params, "server")?, text(&params, "name")?);
    let arguments = strings(&params, "arguments")?;
    let got = hub
        .runtime
        .get_prompt(server, name, &arguments, CancellationToken::new())
        .await
        .map_err(failed)?;
    serde_json::to_value(got).map_err(|e| (code::CONTENT_FAILED, e.to_string()))
}

/// `complete {server, prompt | template, argument, value, context}`: suggestions for one
/// argument of a prompt (`prompt`: its name) or variable of a template (`template`: its URI
/// template).
async fn complete(hub: Arc<Hub>, params: Value) -> Reply {
    let server = text(&params, "server")?;
    let target = match (params.get("prompt"), params.get("template")) {
        (Some(Value::String(name)), None) => CompletionTarget::Prompt(name.clone()),
        (None, Some(Value::String(uri))) => CompletionTarget::Template(uri.clone()),
        _ => {
            return Err((
                code::INVALID_PARAMS,
                "one of `prompt` (its name) or `template` (its URI template)".into(),
            ))
        }
    };
    let (argument, value) = (text(&params, "argument")?, text(&params, "value")?);
    let context = strings(&params, "context")?;
    let completion = hub
        .runtime
        .complete(server, &target, argument, value, &context)
        .await
        .map_err(failed)?;
    serde_json::to_value(completion).map_err(|e| (code::CONTENT_FAILED, e.to_string()))
}

/// `set_log_level {server, level}`: the least level of the log messages `server` sends (to
/// every console: the level is the server's).
async fn set_log_level(hub: Arc<Hub>, params: Value) -> Reply {
    let server = text(&params, "server")?;
    let level: LogLevel = serde_json::from_value(params.get("level").cloned().unwrap_or_default())
        .map_err(|_| {
            (
                code::INVALID_PARAMS,
                "`level` is one of debug, info, notice, warning, error, critical, alert, emergency"
                    .to_string(),
            )
        })?;
    if !hub.runtime.reports().iter().any(|r| r.name == server) {
        return Err((code::NOT_FOUND, format!("no server named {server}")));
    }
    hub.runtime
        .set_log_level(server, level)
        .await
        .map_err(|e| (code::CONTENT_FAILED, format!("{server}: {e}")))?;
    Ok(json!({"server": server, "level": level.as_str()}))
}

/// `subscribe {server, uri, on}`: the server sends `resources/updated` for `uri` from now on
/// (`on: false`: no longer). The daemon's subscription, for every console.
async fn subscribe(hub: Arc<Hub>, params: Value) -> Reply {
    let (server, uri) = (text(&params, "server")?, text(&params, "uri")?);
    let Some(on) = params.get("on").and_then(Value::as_bool) else {
        return Err((code::INVALID_PARAMS, "`on` is true or false".into()));
    };
    hub.runtime
        .set_subscription(server, uri, on)
        .await
        .map_err(failed)?;
    Ok(json!({"server": server, "uri": uri, "on": on}))
}
