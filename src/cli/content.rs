//! What `resources`/`read` and `prompts`/`prompt` share: starting the servers (all, or the one
//! named), saying which servers' content is missing, finding the server of a URI or prompt, and
//! the end of a listing (its errors and exit code).

use std::process::ExitCode;

use serde_json::{json, Value};

use super::asks::AskArgs;
use super::check::start_runtime;
use super::output;
use super::EXIT_CONFIG;
use crate::config::Config;
use crate::runtime::{AgentRuntime, ServerStatus};
use crate::text::sanitize_line;

/// One listing per server (`list` of each), its failure kept as text beside the server.
pub(super) async fn per_server<T, E, F, Fut>(
    servers: Vec<String>,
    list: F,
) -> Vec<(String, Result<T, String>)>
where
    E: std::fmt::Display,
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let mut out = Vec::new();
    for server in servers {
        let listed = list(server.clone()).await.map_err(|e| e.to_string());
        out.push((server, listed));
    }
    out
}

/// Every server started and settled, for a listing.
pub(super) async fn start_settled(
    config: &Config,
    command: &'static str,
) -> Result<AgentRuntime, ExitCode> {
    let runtime = start_runtime(config, AskArgs::default(), command).await?;
    runtime.wait_started().await;
    Ok(runtime)
}

/// Starts only `server` when one is named (exit 2 when the config has none of that name), else
/// every server, and waits until they settled.
pub(super) async fn start_for_one(
    config: &mut Config,
    server: Option<&str>,
    asks: AskArgs,
    command: &'static str,
) -> Result<AgentRuntime, ExitCode> {
    if let Some(server) = server {
        if !config.mcp.servers.iter().any(|s| s.name == server) {
            output::error_line(&format!("error: no server named {server} in the config"));
            return Err(ExitCode::from(EXIT_CONFIG));
        }
        config.mcp.servers.retain(|s| s.name == server);
    }
    let runtime = start_runtime(config, asks, command).await?;
    runtime.wait_started().await;
    Ok(runtime)
}

/// The server found for one item, or the runtime closed and exit 2 with why (and a note for
/// each server that did not start: the item may be one of theirs).
pub(super) async fn found_or_exit(
    runtime: &AgentRuntime,
    found: Result<String, String>,
    what: &str,
) -> Result<String, ExitCode> {
    match found {
        Ok(server) => Ok(server),
        Err(why) => {
            note_failed(runtime, what);
            runtime.close().await;
            output::error_line(&format!("error: {}", sanitize_line(&why, 300)));
            Err(ExitCode::from(EXIT_CONFIG))
        }
    }
}

/// The end of a listing of one kind (`key`: `prompts`, `skills`): every server's items
/// gathered and its failure kept, printed as JSON `{key: [...], "errors", "complete",
/// "missing"}` (docs/commands.md "JSON shapes") or as the table `table` makes of the items; the
/// exit code as [`listing_end`].
pub(super) fn print_listing<T: serde::Serialize>(
    key: &str,
    listed: Vec<(String, Result<Vec<T>, String>)>,
    (missing, failed): (Vec<Value>, bool),
    json: bool,
    table: impl Fn(&[T]) -> String,
) -> ExitCode {
    let mut items = Vec::new();
    let mut errors = Vec::new();
    for (server, listing) in listed {
        match listing {
            Ok(found) => items.extend(found),
            Err(error) => errors.push((server, error)),
        }
    }
    if json {
        print_json(json!({ key: items }), &errors, (missing, failed));
    } else {
        output::print(&table(&items));
    }
    listing_end(&errors, failed)
}

/// A listing as JSON: its `items` (an object of the lists by kind) and `"errors"`,
/// `"complete"`, `"missing"`.
pub(super) fn print_json(
    items: Value,
    errors: &[(String, String)],
    (missing, failed): (Vec<Value>, bool),
) {
    let mut value = items;
    value["errors"] = Value::Array(errors_json(errors));
    value["complete"] = Value::Bool(errors.is_empty() && !failed);
    value["missing"] = Value::Array(missing);
    output::print(&format!(
        "{}\n",
        serde_json::to_string_pretty(&value).unwrap_or_default()
    ));
}

/// What a listing lacks: the servers that did not start as `missing` (docs/commands.md "JSON shapes"),
/// and whether any failed (noted on stderr unless `json`).
pub(super) fn gaps(runtime: &AgentRuntime, json: bool, what: &str) -> (Vec<Value>, bool) {
    let missing = output::missing_json(&runtime.reports());
    let failed = if json {
        runtime
            .reports()
            .iter()
            .any(|r| r.status == ServerStatus::Failed)
    } else {
        note_failed(runtime, what)
    };
    (missing, failed)
}

/// The servers whose listing failed, as the JSON `errors` field says them.
pub(super) fn errors_json(errors: &[(String, String)]) -> Vec<Value> {
    errors
        .iter()
        .map(|(s, e)| json!({"server": s, "error": e}))
        .collect()
}

/// Each listing error on stderr; exit 0 when the listing is complete, else 1.
pub(super) fn listing_end(errors: &[(String, String)], failed: bool) -> ExitCode {
    for (server, error) in errors {
        output::error_line(&format!("error: {server}: {}", sanitize_line(error, 300)));
    }
    if errors.is_empty() && !failed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Notes on stderr for servers that did not start (what they hold is missing); true when
/// there was one.
fn note_failed(runtime: &AgentRuntime, what: &str) -> bool {
    let mut any = false;
    for r in runtime.reports() {
        if let Some(f) = r
            .failure
            .as_ref()
            .filter(|_| r.status == ServerStatus::Failed)
        {
            any = true;
            output::error_line(&format!(
                "note: server {} failed to start ({}); its {what} are missing. Run `aimon-console check` for details.",
                r.name,
                f.class.as_str()
            ));
        }
    }
    any
}
