//! The console's OAuth login of one server (`o`): the same flow as `aimon-console login`
//! (`runtime::begin_login`), its page opened with `xdg-open`, its progress on the notice line;
//! once the token is stored the server is started again and its report comes back as for `r`
//! (by the console's own runtime here, by the daemon over `attach`: `attached/effects.rs`).
//!
//! Separate from `mod.rs`'s effect runner because it waits on the operator for minutes.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::messages::{AppEvent, Level};
use crate::config;
use crate::runtime::{begin_login, AgentRuntime, Login};

/// How long the console waits for the browser.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(600);

/// Logs in to `server` (its entry re-read from the config at `path`), then restarts it.
pub(super) async fn login(
    server: String,
    path: PathBuf,
    runtime: Option<Arc<AgentRuntime>>,
    tx: mpsc::Sender<AppEvent>,
) {
    let Some(entry) = log_in(&server, path, &tx).await else {
        return;
    };
    let Some(runtime) = runtime else { return };
    let _ = tx
        .send(AppEvent::Notice(
            Level::Info,
            format!("logged in to {server}; starting it…"),
        ))
        .await;
    let report = runtime.restart_server(&entry).await;
    let _ = tx.send(AppEvent::ServerRestarted(report)).await;
}

/// Logs in to `server` (its entry read from the config at `path`), its token stored in this
/// process's token store; its entry once logged in (how it went is told on the way).
pub(super) async fn log_in(
    server: &str,
    path: PathBuf,
    tx: &mpsc::Sender<AppEvent>,
) -> Option<config::ServerConfig> {
    let notice = |level, text: String| {
        let tx = tx.clone();
        async move {
            let _ = tx.send(AppEvent::Notice(level, text)).await;
        }
    };
    let loaded = tokio::task::spawn_blocking(move || config::load(&path)).await;
    let entry = match loaded {
        Ok(Ok(cfg)) => cfg.mcp.servers.into_iter().find(|s| s.name == server),
        Ok(Err(e)) => {
            notice(
                Level::Error,
                format!("cannot log in: the config does not load: {e}"),
            )
            .await;
            return None;
        }
        Err(_) => None,
    };
    let Some(entry) = entry else {
        notice(
            Level::Error,
            format!("cannot log in: {server} is not in the config any more"),
        )
        .await;
        return None;
    };
    let failed = |e: &dyn std::fmt::Display| {
        format!(
            "login to {server} failed: {}",
            crate::text::sanitize_line(&e.to_string(), 300)
        )
    };
    match begin_login(&entry).await {
        Err(e) => {
            notice(Level::Error, failed(&e)).await;
            return None;
        }
        Ok(Login::Done(_)) => {}
        Ok(Login::Interactive(pending)) => {
            let url = pending.authorization_url().to_string();
            let opened = match tokio::process::Command::new("xdg-open")
                .arg(&url)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
            {
                Ok(mut child) => {
                    // Reaped when it exits (it hands the URL to the browser and leaves).
                    tokio::spawn(async move { child.wait().await });
                    true
                }
                Err(_) => false,
            };
            let how = if opened {
                "finish it in the browser that opened"
            } else {
                "no browser here: run `aimon-console login` in a shell, or open"
            };
            notice(
                Level::Info,
                format!(
                    "log in to {server}: {how} {}",
                    crate::text::sanitize_line(&url, 2000)
                ),
            )
            .await;
            let redirected = tokio::select! {
                redirected = pending.wait_for_redirect() => redirected,
                () = tokio::time::sleep(LOGIN_TIMEOUT) => {
                    notice(Level::Warn, format!("login to {server}: no answer from the browser; press o to try again")).await;
                    return None;
                }
            };
            let finished = match redirected {
                Ok(url) => pending.finish(&url).await,
                Err(e) => Err(e),
            };
            if let Err(e) = finished {
                notice(Level::Error, failed(&e)).await;
                return None;
            }
        }
    }
    Some(entry)
}
