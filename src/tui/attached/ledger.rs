//! `L` over `attach`: the daemons' rules (each daemon's config file's `policy.rules`) and
//! session approvals, loaded from each (`ledger`), a session approval revoked (`revoke`) and a
//! rule removed from its file (`remove_rule`) in the daemon that holds it, then loaded again.

use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::{Attachment, Daemon};
use crate::runtime::rule_from_json;
use crate::tui::messages::{AppEvent, Level};
use crate::tui::modals::ledger::LedgerRow;

type Tx = mpsc::Sender<AppEvent>;

/// The rows of one daemon's `ledger` answer, named as the console names its tools and rules.
fn rows(daemon: &Daemon, answer: &Value) -> Vec<LedgerRow> {
    let names = &daemon.names;
    let file = daemon.link.hello["daemon"]["config"]
        .as_str()
        .unwrap_or("its config file");
    let list = |key: &str| answer[key].as_array().cloned().unwrap_or_default();
    let rules = list("rules")
        .into_iter()
        .enumerate()
        .filter_map(|(i, rule)| {
            Some(LedgerRow::Rule {
                index: usize::try_from(names.id(i as u64)).ok()?,
                rule: rule_from_json(&rule)?,
                from: Some(format!(
                    "policy.rules[{i}] of daemon {} ({file})",
                    names.label
                )),
            })
        });
    let session = list("session").into_iter().filter_map(|entry| {
        Some(LedgerRow::Session {
            tool: names.tool(entry["tool"].as_str()?),
            fingerprint: entry["fingerprint"].as_str()?.to_string(),
        })
    });
    rules.chain(session).collect()
}

/// Every daemon's rules and session approvals, kept in the attachment; the console is told
/// (`LedgerLoaded`) once they are.
async fn reload(attachment: &Attachment, tx: &Tx) {
    let mut all = Vec::new();
    for daemon in &attachment.daemons {
        match daemon.link.request("ledger", json!({})).await {
            Ok(answer) => all.extend(rows(daemon, &answer)),
            Err((_, why)) => {
                let said = format!("daemon {}'s rules were not had: {why}", daemon.names.label);
                let _ = tx.send(AppEvent::Notice(Level::Warn, said)).await;
            }
        }
    }
    *attachment.ledger.lock().unwrap_or_else(|e| e.into_inner()) = Some(all);
    let _ = tx.send(AppEvent::LedgerLoaded).await;
}

pub(super) fn load(attachment: &Arc<Attachment>, tx: Tx) {
    let attachment = attachment.clone();
    tokio::spawn(async move { reload(&attachment, &tx).await });
}

/// Asks the daemon whose name `local` finds for `method` with `params(its own name)`; says
/// `done` (or why not) and loads the ledger again.
fn change<T: Send + 'static>(
    attachment: &Arc<Attachment>,
    tx: Tx,
    local: impl Fn(&super::fleet::Names) -> Option<T>,
    (method, params): (&'static str, impl FnOnce(T) -> Value + Send + 'static),
    done: String,
) {
    let Some((daemon, own)) = attachment.whose(local) else {
        return;
    };
    let (link, attachment) = (daemon.link.clone(), attachment.clone());
    tokio::spawn(async move {
        let said = match link.request(method, params(own)).await {
            Ok(_) => (Level::Info, done),
            Err((_, why)) => (Level::Error, why),
        };
        let _ = tx.send(AppEvent::Notice(said.0, said.1)).await;
        reload(&attachment, &tx).await;
    });
}

/// `d` on a session approval: revoked in its daemon.
pub(super) fn revoke(attachment: &Arc<Attachment>, tool: String, tx: Tx) {
    let done = format!("revoked the session approval of {tool} in its daemon");
    let ask = |own: String| json!({"tool": own});
    let local = |n: &super::fleet::Names| n.local_tool(&tool).map(str::to_string);
    change(attachment, tx, local, ("revoke", ask), done);
}

/// `d` `d` on a rule: removed from its daemon's config file.
pub(super) fn remove_rule(attachment: &Arc<Attachment>, index: usize, tx: Tx) {
    let done = "removed the rule from the daemon's config file".to_string();
    let ask = |own: u64| json!({"index": own});
    let local = |n: &super::fleet::Names| n.local_id(index as u64);
    change(attachment, tx, local, ("remove_rule", ask), done);
}
