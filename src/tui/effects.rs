//! The background work of the Resources and Prompts panes and of elicitations: each effect runs
//! in a task of its own through the runtime (listing, reading, subscribing, completing, getting
//! a prompt) or the machine (saving a file, `xdg-open`), and comes back as a `ContentEvent`.
//!
//! Separate from `mod.rs`, whose event loop runs the other effects, to keep that file to the
//! loop itself.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::listing::ContentEvent;
use super::messages::{AppEvent, CompletionAsk};
use crate::runtime::{AgentRuntime, LogLevel};

/// Where the results go.
type Tx = mpsc::Sender<AppEvent>;

fn back(tx: Tx, event: ContentEvent) {
    tokio::spawn(async move {
        let _ = tx.send(AppEvent::Content(event)).await;
    });
}

/// The runtime, or why the request cannot be made.
fn need(runtime: Option<Arc<AgentRuntime>>) -> Result<Arc<AgentRuntime>, String> {
    runtime.ok_or_else(|| "the console has no runtime yet".to_string())
}

/// Sets `server`'s log level through `work` (the console's runtime, or its daemon), and says
/// how that went (`AppEvent::LogLevelSet`).
pub(super) fn set_log_level(
    tx: Tx,
    server: String,
    level: LogLevel,
    work: impl std::future::Future<Output = Result<(), String>> + Send + 'static,
) {
    tokio::spawn(async move {
        let result = work.await;
        let _ = tx
            .send(AppEvent::LogLevelSet {
                server,
                level,
                result,
            })
            .await;
    });
}

pub(super) fn list_resources(runtime: Option<Arc<AgentRuntime>>, tx: Tx, server: String) {
    tokio::spawn(async move {
        let result = match need(runtime) {
            Ok(rt) => rt.list_resources(&server).await.map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        back(tx, ContentEvent::ResourcesListed { server, result });
    });
}

/// Reads a resource of `server` into the viewer, or (`skill`) loads the skill whose
/// `SKILL.md` `uri` is: shown as a read of that file, or why it was refused.
pub(super) fn read_resource(
    runtime: Option<Arc<AgentRuntime>>,
    tx: Tx,
    (server, uri): (String, String),
    skill: bool,
) {
    tokio::spawn(async move {
        let result = match need(runtime) {
            Ok(rt) if skill => rt
                .read_skill_file(&server, &uri, CancellationToken::new())
                .await
                .map_err(|e| e.to_string()),
            Ok(rt) => rt
                .read_resource(&server, &uri, CancellationToken::new())
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        back(
            tx,
            ContentEvent::ResourceRead {
                server,
                uri,
                result,
            },
        );
    });
}

pub(super) fn subscribe(
    runtime: Option<Arc<AgentRuntime>>,
    tx: Tx,
    server: String,
    uri: String,
    on: bool,
) {
    tokio::spawn(async move {
        let result = match need(runtime) {
            Ok(rt) => rt
                .set_subscription(&server, &uri, on)
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        back(
            tx,
            ContentEvent::Subscribed {
                server,
                uri,
                on,
                result,
            },
        );
    });
}

pub(super) fn complete(runtime: Option<Arc<AgentRuntime>>, tx: Tx, ask: CompletionAsk) {
    tokio::spawn(async move {
        let result = match need(runtime) {
            Ok(rt) => rt
                .complete(
                    &ask.server,
                    &ask.target,
                    &ask.argument,
                    &ask.value,
                    &ask.context,
                )
                .await
                .map(|c| c.values)
                .map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        back(
            tx,
            ContentEvent::Completed {
                seq: ask.seq,
                result,
            },
        );
    });
}

pub(super) fn list_prompts(runtime: Option<Arc<AgentRuntime>>, tx: Tx, server: String) {
    tokio::spawn(async move {
        let result = match need(runtime) {
            Ok(rt) => rt.list_prompts(&server).await.map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        back(tx, ContentEvent::PromptsListed { server, result });
    });
}

pub(super) fn get_prompt(
    runtime: Option<Arc<AgentRuntime>>,
    tx: Tx,
    server: String,
    name: String,
    arguments: BTreeMap<String, String>,
) {
    tokio::spawn(async move {
        let result = match need(runtime) {
            Ok(rt) => rt
                .get_prompt(&server, &name, &arguments, CancellationToken::new())
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        back(
            tx,
            ContentEvent::PromptGot {
                server,
                name,
                result,
            },
        );
    });
}

/// Writes `bytes` to a new file at `path`; an existing file is never overwritten.
fn write_new(path: &PathBuf, bytes: &[u8]) -> Result<usize, String> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => "a file of that name exists already".to_string(),
            _ => e.to_string(),
        })?;
    file.write_all(bytes).map_err(|e| e.to_string())?;
    Ok(bytes.len())
}

pub(super) fn save(tx: Tx, path: PathBuf, bytes: Vec<u8>) {
    tokio::spawn(async move {
        let written = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || write_new(&path, &bytes)).await
        };
        let result = written.map_err(|e| e.to_string()).and_then(|r| r);
        back(tx, ContentEvent::Saved { path, result });
    });
}

/// Starts `xdg-open URL` and reaps it.
pub(super) fn open_url(tx: Tx, url: String) {
    tokio::spawn(async move {
        let started = tokio::process::Command::new("xdg-open")
            .arg(&url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        let result = match started {
            Ok(mut child) => {
                // Reaped in the background: a browser may take its time to hand over.
                tokio::spawn(async move {
                    let _ = child.wait().await;
                });
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err("there is no xdg-open here".to_string())
            }
            Err(e) => Err(format!("xdg-open did not start: {e}")),
        };
        back(tx, ContentEvent::UrlOpened { url, result });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saving_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.bin");
        assert_eq!(write_new(&path, b"one"), Ok(3));
        assert!(write_new(&path, b"two").unwrap_err().contains("exists"));
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
    }
}
