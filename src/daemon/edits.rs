//! The daemon's config file written and read from a console: a server's trust (`trust`), a
//! rule that always allows a tool (`approve` with `allow_always`) and a rule removed
//! (`remove_rule`), with its comments kept, as the console writes its own
//! (`config::set_server_trust`, `config::add_rule`, `config::remove_rule`). Each write is made
//! against the file as the daemon last loaded or wrote it: one changed on disk since is not
//! written, and the console is told why. A server restarted (`restart`) starts from its entry
//! as the file has it now, as the console's own `r` reads it.

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

/// `restart {server}`: the server started again from its entry as the daemon's config file
/// has it now (a command fixed, a trust written by hand or by `trust`); answered with its
/// report once its new start ended. A file that does not load restarts nothing: the answer
/// says where it is wrong (file, line and column).
pub async fn restart(hub: Arc<Hub>, params: Value) -> Reply {
    let name = params
        .get("server")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if !hub.config.mcp.servers.iter().any(|s| s.name == name) {
        return Err((code::NOT_FOUND, format!("no server named {name:?}")));
    }
    let path = hub.config.path.clone();
    let loaded = tokio::task::spawn_blocking(move || config::load(&path))
        .await
        .map_err(|e| (code::CONFIG_INVALID, e.to_string()))?
        .map_err(|e| {
            (
                code::CONFIG_INVALID,
                format!("the config file does not load: {}", e.report()),
            )
        })?;
    let Some(entry) = loaded.mcp.servers.into_iter().find(|s| s.name == name) else {
        return Err((
            code::NOT_FOUND,
            format!(
                "{name:?} is no longer in {} (a daemon runs the servers of the file it started \
                 with: restart the daemon for another set)",
                hub.config.path.display()
            ),
        ));
    };
    Ok(json!({"report": hub.runtime.restart_server(&entry).await}))
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
