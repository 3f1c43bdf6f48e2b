//! The Resources and Prompts panes over `attach`: a daemon's servers listed, read, completed
//! and their prompts got through that daemon (`resources`, `read`, `complete`, `prompts`,
//! `get_prompt`; a resource's updates subscribed to, `subscribe`; a server's log level set,
//! `set_log_level`), back as the content events the console's own runtime would give, the
//! servers named as the console shows them.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::fleet::Names;
use super::Attachment;
use crate::runtime::{
    resource_content_from_json, CompletionTarget, LogLevel, PromptInfo, PromptMessages,
    ResourceListing,
};
use crate::tui::listing::ContentEvent;
use crate::tui::messages::{AppEvent, CompletionAsk};

type Tx = mpsc::Sender<AppEvent>;

/// What a daemon answered, with the names of its console; or why there is no answer.
type Answer = Result<(Value, Names), String>;

/// Asks the daemon of `server` for `method` with `params` (the server's own name added), and
/// sends back the content event `done` makes of the answer.
fn ask(
    attachment: &Attachment,
    server: &str,
    method: &'static str,
    mut params: Value,
    tx: Tx,
    done: impl FnOnce(Answer) -> ContentEvent + Send + 'static,
) {
    let Some((link, names, own)) = attachment.server_of(server) else {
        let event = done(Err(format!("{server}: no daemon has it")));
        tokio::spawn(async move {
            let _ = tx.send(AppEvent::Content(event)).await;
        });
        return;
    };
    params["server"] = own.into();
    tokio::spawn(async move {
        let answer = link.request(method, params).await;
        let event = done(answer.map(|a| (a, names)).map_err(|(_, why)| why));
        let _ = tx.send(AppEvent::Content(event)).await;
    });
}

/// The objects of `value`'s `lists`, their `server` named as the console names it.
fn rename(mut value: Value, lists: &[&str], names: &Names) -> Value {
    for list in lists {
        for item in value
            .get_mut(*list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(Value::String(server)) = item.get_mut("server") {
                *server = names.server(server);
            }
        }
    }
    value
}

/// `value` read as a `T`.
fn parse<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| format!("the daemon's answer: {e}"))
}

pub(super) fn list_resources(attachment: &Attachment, server: String, tx: Tx) {
    let asked = server.clone();
    ask(
        attachment,
        &asked,
        "resources",
        json!({}),
        tx,
        move |answer| {
            let result = answer.and_then(|(value, names)| {
                parse::<ResourceListing>(rename(
                    value,
                    &["resources", "templates", "skills"],
                    &names,
                ))
            });
            ContentEvent::ResourcesListed { server, result }
        },
    );
}

/// A resource read, or (`skill`) a skill's `SKILL.md` loaded.
pub(super) fn read(attachment: &Attachment, (server, uri): (String, String), skill: bool, tx: Tx) {
    let params = json!({"uri": uri, "skill": skill});
    let asked = server.clone();
    ask(attachment, &asked, "read", params, tx, move |answer| {
        let result = answer.and_then(|(value, _)| {
            let parts = value["contents"].as_array().cloned().unwrap_or_default();
            parts
                .iter()
                .map(|part| {
                    resource_content_from_json(part)
                        .ok_or_else(|| "the daemon sent a part that is not a read".to_string())
                })
                .collect()
        });
        ContentEvent::ResourceRead {
            server,
            uri,
            result,
        }
    });
}

/// Subscribes to `uri`'s updates in its daemon (`on: false`: no longer).
pub(super) fn subscribe(
    attachment: &Attachment,
    (server, uri): (String, String),
    on: bool,
    tx: Tx,
) {
    let params = json!({"uri": uri, "on": on});
    let asked = server.clone();
    ask(attachment, &asked, "subscribe", params, tx, move |answer| {
        ContentEvent::Subscribed {
            server,
            uri,
            on,
            result: answer.map(|_| ()),
        }
    });
}

pub(super) fn complete(attachment: &Attachment, completion: CompletionAsk, tx: Tx) {
    let CompletionAsk {
        seq,
        server,
        target,
        argument,
        value,
        context,
    } = completion;
    let mut params = json!({"argument": argument, "value": value, "context": context});
    match target {
        CompletionTarget::Prompt(name) => params["prompt"] = name.into(),
        CompletionTarget::Template(uri) => params["template"] = uri.into(),
    }
    ask(attachment, &server, "complete", params, tx, move |answer| {
        let result = answer.and_then(|(value, _)| parse(value["values"].clone()));
        ContentEvent::Completed { seq, result }
    });
}

pub(super) fn list_prompts(attachment: &Attachment, server: String, tx: Tx) {
    let asked = server.clone();
    ask(
        attachment,
        &asked,
        "prompts",
        json!({}),
        tx,
        move |answer| {
            let result = answer.and_then(|(value, names)| {
                parse::<Vec<PromptInfo>>(rename(value, &["prompts"], &names)["prompts"].take())
            });
            ContentEvent::PromptsListed { server, result }
        },
    );
}

pub(super) fn get_prompt(
    attachment: &Attachment,
    (server, name): (String, String),
    arguments: BTreeMap<String, String>,
    tx: Tx,
) {
    let params = json!({"name": name, "arguments": arguments});
    let asked = server.clone();
    ask(
        attachment,
        &asked,
        "get_prompt",
        params,
        tx,
        move |answer| {
            let result = answer.and_then(|(value, _)| parse::<PromptMessages>(value));
            ContentEvent::PromptGot {
                server,
                name,
                result,
            }
        },
    );
}

/// The least level of the log messages `server` sends, set in its daemon.
pub(super) fn set_log_level(attachment: &Attachment, server: String, level: LogLevel, tx: Tx) {
    let Some((link, _, own)) = attachment.server_of(&server) else {
        return;
    };
    let work = async move {
        let params = json!({"server": own, "level": level.as_str()});
        let set = link.request("set_log_level", params).await;
        set.map(|_| ()).map_err(|(_, why)| why)
    };
    crate::tui::effects::set_log_level(tx, server, level, work);
}
