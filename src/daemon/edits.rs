//! The daemon's config file written from a console: a server's trust (`trust`), a rule that
//! always allows a tool (`approve` with `allow_always`) and a rule removed (`remove_rule`),
//! with its comments kept, as the console writes its own (`config::set_server_trust`,
//! `config::add_rule`, `config::remove_rule`). Each write is made against
//! the file as the daemon last loaded or wrote it: one changed on disk since is not written,
//! and the console is told why.

use std::sync::Arc;

use serde_json::{json, Value};

use super::hub::{Hub, Who};
use super::wire::code;
use crate::approval::ApprovalDecision;
use crate::config::{self, AnnotationTrust, ApprovalRule, Config};

type Reply = Result<Value, (i64, String)>;

fn not_written(e: config::WriteError) -> (i64, String) {
    let why = match e {
        config::WriteError::Changed { path } => format!(
            "{} changed on disk since the daemon loaded it: nothing written (restart the daemon to load it, then try again)",
            path.display()
        ),
        other => other.to_string(),
    };
    (code::NOT_WRITTEN, why)
}

/// Writes the daemon's config with `edit` (given the digest it expects; returns the new one),
/// then loads it again.
async fn write(
    hub: &Hub,
    edit: impl FnOnce(&std::path::Path, u64) -> Result<u64, config::WriteError> + Send + 'static,
) -> Result<Config, (i64, String)> {
    let mut digest = hub.digest.lock().await;
    let (path, expected) = (hub.config.path.clone(), *digest);
    let written = tokio::task::spawn_blocking(move || {
        let written = edit(&path, expected).map_err(not_written)?;
        let loaded = config::load(&path).map_err(|e| {
            (
                code::NOT_WRITTEN,
                format!("written, but the config does not load now: {}", e.report()),
            )
        })?;
        Ok((written, loaded))
    })
    .await
    .map_err(|e| (code::NOT_WRITTEN, e.to_string()))??;
    *digest = written.0;
    Ok(written.1)
}

/// `trust {server, trust}`: the server's `annotation_trust` written, and the server started
/// again with it; answered with its report.
pub async fn trust(hub: Arc<Hub>, params: Value) -> Reply {
    let invalid = |m: &str| (code::INVALID_PARAMS, m.to_string());
    let server = params
        .get("server")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("`server` is a server's name"))?
        .to_string();
    let trust: AnnotationTrust = params
        .get("trust")
        .cloned()
        .and_then(|t| serde_json::from_value(t).ok())
        .ok_or_else(|| invalid("`trust` is trust, ignore or another annotation_trust value"))?;
    if !hub.config.mcp.servers.iter().any(|s| s.name == server) {
        return Err((code::NOT_FOUND, format!("no server {server:?}")));
    }
    let name = server.clone();
    let loaded = write(&hub, move |path, digest| {
        config::set_server_trust(path, digest, &name, trust)
    })
    .await?;
    let Some(entry) = loaded.mcp.servers.into_iter().find(|s| s.name == server) else {
        return Err((
            code::NOT_FOUND,
            format!("no server {server:?} in the file now"),
        ));
    };
    let report = hub.runtime.restart_server(&entry).await;
    Ok(json!({"report": report}))
}

/// `approve {id, decision: allow_always}`: the rule that always allows the tool (its pin
/// held) written first, the gate given the file's rules, then the approval answered.
pub async fn always(hub: Arc<Hub>, id: u64, who: Who) -> Reply {
    let Some((tool, pin)) = hub.waiting_tool(id) else {
        return Err((
            code::NO_SUCH_APPROVAL,
            format!("no approval of call {id} is waiting"),
        ));
    };
    let rule = ApprovalRule::allow_tool(&tool, pin.as_deref());
    let loaded = write(&hub, move |path, digest| {
        config::add_rule(path, digest, &rule)
    })
    .await?;
    hub.runtime.gate().set_rules(loaded.policy.rules);
    hub.answer(id, ApprovalDecision::AllowAlways, &who)
        .map_err(|refusal| (refusal.code, refusal.message))?;
    Ok(json!({"id": id, "decision": "allow_always", "rule": format!("always allow {tool}")}))
}

/// `remove_rule {index}`: `policy.rules[index]` removed from the daemon's config file (and
/// any entry written exactly like it), the gate given the file's rules; answered with what
/// lets tools run now (`ledger`'s answer).
pub async fn remove_rule(hub: Arc<Hub>, params: Value) -> Reply {
    let Some(index) = params.get("index").and_then(Value::as_u64) else {
        return Err((
            code::INVALID_PARAMS,
            "`index` is the rule's place in policy.rules, a number".into(),
        ));
    };
    let index = usize::try_from(index).unwrap_or(usize::MAX);
    let loaded = write(&hub, move |path, digest| {
        config::remove_rule(path, digest, index)
    })
    .await?;
    let gate = hub.runtime.gate();
    gate.set_rules(loaded.policy.rules);
    Ok(crate::runtime::ledger_json(gate))
}
