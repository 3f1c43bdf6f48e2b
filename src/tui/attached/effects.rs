//! The console's effects over `attach`: calls, cancels, restarts, the servers' resources
//! and prompts (content.rs), the rules and session approvals (ledger.rs) and the model's
//! answer to a sampling request become the daemon's requests; the agent's work goes to the
//! daemon's sessions (chat.rs); saving and opening a URL stay on this machine, and so does an
//! OAuth login, for a daemon on this machine that keeps its tokens where this console does
//! (another is told where to log in instead).

use std::sync::Arc;

use serde_json::json;
use tokio::sync::mpsc;

use super::fleet::Names;
use super::{content, ledger, Attachment};
use crate::agent::sampling::Sampled;
use crate::agent::turn::FinishReason;
use crate::daemon::client::Link;
use crate::tui::app::App;
use crate::tui::chat::ChatEffect;
use crate::tui::messages::{AppEvent, Effect, LedgerAsk, Level};

type Tx = mpsc::Sender<AppEvent>;

fn tell(tx: &Tx, level: Level, text: String) {
    let tx = tx.clone();
    tokio::spawn(async move {
        let _ = tx.send(AppEvent::Notice(level, text)).await;
    });
}

/// `server` (the daemon's `own`) started again by the daemon at `link`; its report, or why
/// not, to the console.
async fn restart(link: Arc<Link>, names: Names, (server, own): (String, String), tx: Tx) {
    let answer = link.request("restart", json!({"server": own})).await;
    let event = match answer.map(|a| report_of(a, &names)) {
        Ok(Ok(report)) => AppEvent::ServerRestarted(report),
        Ok(Err(why)) | Err((_, why)) => AppEvent::RestartRefused { server, why },
    };
    let _ = tx.send(event).await;
}

/// The daemon's config file, when a login made here reaches the daemon: it runs on this
/// machine (its Unix socket) and keeps its tokens where this console keeps its own, so the
/// token this console stores is the one its restart reads. Else why not.
fn login_here(link: &Link) -> Result<std::path::PathBuf, String> {
    let daemon = &link.hello["daemon"];
    if link.address.starts_with("tls://") {
        return Err(format!(
            "the daemon at {} is on another machine",
            link.address
        ));
    }
    let ours = crate::runtime::token_store_dir();
    match (daemon["token_store"].as_str(), daemon["config"].as_str()) {
        (Some(theirs), Some(config)) if std::path::Path::new(theirs) == ours => Ok(config.into()),
        (Some(theirs), _) if std::path::Path::new(theirs) != ours => Err(format!(
            "the daemon keeps its tokens in {theirs}, this console in {}",
            ours.display()
        )),
        _ => Err("the daemon does not say where it keeps its tokens and its config".into()),
    }
}

/// The server report of a daemon's answer (`restart`, `trust`), named as the console shows it.
fn report_of(
    mut answer: serde_json::Value,
    names: &super::fleet::Names,
) -> Result<crate::runtime::ServerReport, String> {
    if let Some(serde_json::Value::String(name)) = answer["report"].get_mut("name") {
        *name = names.server(name);
    }
    serde_json::from_value(answer["report"].take()).map_err(|e| e.to_string())
}

/// Runs one effect against the daemons; results come back as app events.
pub(in crate::tui) fn run_effect(effect: Effect, app: &App, attachment: &Arc<Attachment>, tx: &Tx) {
    let tx = tx.clone();
    match effect {
        Effect::Quit | Effect::TurnBoundary => {}
        Effect::Call { tool, arguments } => {
            let Some((daemon, own)) = attachment.whose(|n| n.local_tool(&tool).map(str::to_string))
            else {
                return tell(&tx, Level::Error, format!("{tool}: no daemon has it"));
            };
            let link = daemon.link.clone();
            tokio::spawn(async move {
                let params = json!({"tool": own, "arguments": arguments});
                if let Err((_, why)) = link.request("call", params).await {
                    tell(&tx, Level::Error, format!("{tool}: {why}"));
                }
            });
        }
        Effect::CancelCall(id) => {
            let Some((daemon, own)) = attachment.whose(|n| n.local_id(id)) else {
                return;
            };
            let link = daemon.link.clone();
            tokio::spawn(async move {
                if let Err((_, why)) = link.request("cancel", json!({"id": own})).await {
                    tell(&tx, Level::Error, format!("call {id} not cancelled: {why}"));
                }
            });
        }
        Effect::RestartServer { server } => {
            let Some((link, names, own)) = attachment.server_of(&server) else {
                return;
            };
            tokio::spawn(restart(link, names, (server, own), tx));
        }
        Effect::Agent(ChatEffect::Start {
            epoch,
            profile,
            resume,
        }) => super::chat::start(attachment.clone(), epoch, profile, resume, tx),
        Effect::Agent(other) => crate::tui::chat::task::run_effect(other, app, &tx),
        Effect::Save { path, bytes } => crate::tui::effects::save(tx, path, bytes),
        Effect::OpenUrl { url } => crate::tui::effects::open_url(tx, url),
        // The daemon writes it as it takes the answer (mod.rs).
        Effect::AlwaysAllow { .. } => {}
        Effect::WriteTrust { server, trust, .. } => {
            let Some((link, names, own)) = attachment.server_of(&server) else {
                return;
            };
            tokio::spawn(async move {
                let params = json!({"server": own, "trust": trust.as_str()});
                match link.request("trust", params).await {
                    Ok(answer) => {
                        if let Ok(report) = report_of(answer, &names) {
                            let _ = tx.send(AppEvent::ServerRestarted(report)).await;
                        }
                        let text = format!(
                            "annotation_trust: {} written to the daemon's config; {server} started again with it",
                            trust.as_str()
                        );
                        tell(&tx, Level::Info, text);
                    }
                    Err((_, why)) => tell(&tx, Level::Error, format!("{server}: {why}")),
                }
            });
        }
        // Not sent over attach: `R` asks each server's restart (keys.rs).
        Effect::RestartAll => {}
        Effect::ListResources { server } => content::list_resources(attachment, server, tx),
        Effect::ReadResource { server, uri } => content::read(attachment, (server, uri), false, tx),
        Effect::LoadSkill { server, uri } => content::read(attachment, (server, uri), true, tx),
        Effect::Complete(ask) => content::complete(attachment, ask, tx),
        Effect::ListPrompts { server } => content::list_prompts(attachment, server, tx),
        Effect::GetPrompt {
            server,
            name,
            arguments,
        } => content::get_prompt(attachment, (server, name), arguments, tx),
        Effect::Subscribe { server, uri, on } => {
            content::subscribe(attachment, (server, uri), on, tx)
        }
        Effect::SetLogLevel { server, level } => {
            content::set_log_level(attachment, server, level, tx)
        }
        Effect::RemoveRule { index, .. } => ledger::remove_rule(attachment, index, tx),
        Effect::Ledger(LedgerAsk::Load) => ledger::load(attachment, tx),
        Effect::Ledger(LedgerAsk::Revoke { tool }) => ledger::revoke(attachment, tool, tx),
        Effect::Login { server } => {
            let Some((link, names, own)) = attachment.server_of(&server) else {
                return;
            };
            match login_here(&link) {
                Ok(config) => {
                    tokio::spawn(async move {
                        if crate::tui::login::log_in(&own, config, &tx).await.is_some() {
                            let text =
                                format!("logged in to {server}; the daemon starts it again…");
                            tell(&tx, Level::Info, text);
                            restart(link, names, (server, own), tx).await;
                        }
                    });
                }
                Err(why) => {
                    let config = link.hello["daemon"]["config"]
                        .as_str()
                        .unwrap_or("its config");
                    let text = format!(
                        "log in to {server} where the daemon runs, then press r: aimon-console \
                         login {own} --config {config} ({why})"
                    );
                    tell(&tx, Level::Warn, text);
                }
            }
        }
        Effect::Sample { id } => sample(attachment, id, tx),
    }
}

/// Sampling request `id`'s answer written by its daemon's model (`sample`), for the operator
/// to review; it comes back as `AppEvent::Sampled`, as the console's own model's would.
fn sample(attachment: &Attachment, id: u64, tx: Tx) {
    let Some((daemon, own)) = attachment.whose(|n| n.local_id(id)) else {
        return;
    };
    let link = daemon.link.clone();
    tokio::spawn(async move {
        let result = link
            .request("sample", json!({"id": own}))
            .await
            .map(|answer| Sampled {
                text: answer["text"].as_str().unwrap_or_default().to_string(),
                model: answer["model"].as_str().unwrap_or_default().to_string(),
                finish_reason: answer["ended"].as_str().map(FinishReason::named),
            })
            .map_err(|(_, why)| why);
        let _ = tx.send(AppEvent::Sampled { id, result }).await;
    });
}
