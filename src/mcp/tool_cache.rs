//! The cached tool lists of `start: lazy` servers (MCP 2026-07-28 caching, SEP-2549): a
//! server's last `tools/list` is kept on disk, one 0600 file per server under
//! `$XDG_STATE_HOME/aimon-console/tools/`, for as long as the server said it stays fresh
//! (`ttlMs`; absent or 0: not at all). A lazy server whose list is fresh is not started at
//! start-up: its tools are offered from here, and its first call starts it.
//!
//! A list is taken only for the config entry that made it (a digest of what reaches the
//! server: transport, command, arguments, environment, folder, URL, headers, token, sandbox; the
//! digest holds none of them) and only before its time is up. It is replaced by every
//! listing of the running server (after `tools/list_changed` too), and removed when a listing
//! says it is not to be kept. A file that cannot be read is no list: the server starts.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::listed::ListedTool;
use crate::config::ServerConfig;

/// The file format's version; another one is no list.
const VERSION: u64 = 1;

/// Why there is no list to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoList {
    /// No file.
    Missing,
    /// The file is not a list this program wrote.
    Unreadable(String),
    /// It was made for another config entry.
    OtherEntry,
    /// Its time is up.
    Expired,
}

/// The folder of the cached lists.
pub fn dir() -> PathBuf {
    crate::config::state_home().join("tools")
}

/// The file of `config`'s server.
fn path(config: &ServerConfig) -> PathBuf {
    let digest = ring::digest::digest(&ring::digest::SHA256, config.name.as_bytes());
    let name: String = digest.as_ref()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    dir().join(format!("{name}.json"))
}

/// The digest of what reaches the server in `config` (no value of it can be read back).
pub fn entry_digest(config: &ServerConfig) -> String {
    let entry = json!({
        "transport": config.transport.as_str(),
        "command": config.command,
        "args": config.args,
        "env": config.env,
        "cwd": config.cwd,
        "url": config.url,
        "headers": config.headers,
        "bearer_token": config.bearer_token,
        "sandbox": config.sandbox.as_ref().map(|s| format!("{s:?}")),
    });
    let digest = ring::digest::digest(&ring::digest::SHA256, entry.to_string().as_bytes());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The cached list of `config`'s server, when there is a fresh one for this entry.
pub fn read(config: &ServerConfig) -> Result<Vec<ListedTool>, NoList> {
    let bytes = match std::fs::read(path(config)) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(NoList::Missing),
        Err(e) => return Err(NoList::Unreadable(e.to_string())),
    };
    parse(&bytes, &entry_digest(config), now_ms())
}

/// A list file's tools, if it was made for the entry `digest` and is fresh at `now_ms`. Each
/// tool is read on its own: an entry that is not a tool is left out.
pub fn parse(bytes: &[u8], digest: &str, now_ms: u64) -> Result<Vec<ListedTool>, NoList> {
    let file: Value =
        serde_json::from_slice(bytes).map_err(|e| NoList::Unreadable(e.to_string()))?;
    let number = |key: &str| file.get(key).and_then(Value::as_u64);
    if number("version") != Some(VERSION) {
        return Err(NoList::Unreadable("not a version 1 list".into()));
    }
    if file.get("entry").and_then(Value::as_str) != Some(digest) {
        return Err(NoList::OtherEntry);
    }
    let (Some(listed_at), Some(ttl)) = (number("listed_at_ms"), number("ttl_ms")) else {
        return Err(NoList::Unreadable("no listed_at_ms or ttl_ms".into()));
    };
    if now_ms >= listed_at.saturating_add(ttl) || listed_at > now_ms {
        return Err(NoList::Expired);
    }
    let tools = file
        .get("tools")
        .and_then(Value::as_array)
        .ok_or_else(|| NoList::Unreadable("no tools".into()))?;
    Ok(tools
        .iter()
        .filter_map(|tool| serde_json::from_value::<rmcp::model::Tool>(tool.clone()).ok())
        .map(ListedTool::from)
        .collect())
}

/// Keeps `tools`, listed now, for `ttl` (none or zero: the list is not to be kept, and any
/// kept one is removed). A failure to write is logged: the server then starts next time.
pub fn write(config: &ServerConfig, tools: &[ListedTool], ttl: Option<Duration>) {
    let path = path(config);
    let ttl_ms = ttl.map_or(0, |t| t.as_millis() as u64);
    if ttl_ms == 0 {
        remove(config);
        return;
    }
    let file = json!({
        "version": VERSION,
        "server": config.name,
        "entry": entry_digest(config),
        "listed_at_ms": now_ms(),
        "ttl_ms": ttl_ms,
        "tools": tools.iter().map(tool_json).collect::<Vec<_>>(),
    });
    if let Err(e) = crate::config::write_private(&path, &file.to_string()) {
        tracing::warn!(server = %config.name, path = %path.display(), error = %e, "cannot keep the tool list");
    }
}

/// Removes the kept list of `config`'s server, if there is one.
pub fn remove(config: &ServerConfig) {
    let path = path(config);
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            tracing::warn!(server = %config.name, path = %path.display(), error = %e, "cannot remove the tool list")
        }
    }
}

/// A tool as `tools/list` gave it.
fn tool_json(tool: &ListedTool) -> Value {
    let parse = |text: &str| serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
    let mut out = json!({
        "name": tool.name,
        "description": tool.description,
        "inputSchema": parse(tool.input_schema.as_str()),
    });
    if let Some(title) = &tool.title {
        out["title"] = json!(title);
    }
    if let Some(schema) = &tool.output_schema {
        out["outputSchema"] = parse(schema.as_str());
    }
    if let Some(annotations) = &tool.annotations {
        out["annotations"] = annotations.to_json();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> ListedTool {
        let tool: rmcp::model::Tool = serde_json::from_value(json!({
            "name": name,
            "description": "d",
            "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
            "annotations": {"readOnlyHint": true},
        }))
        .expect("a tool");
        tool.into()
    }

    fn file(digest: &str, listed_at: u64, ttl: u64, tools: Value) -> Vec<u8> {
        json!({"version": 1, "entry": digest, "listed_at_ms": listed_at, "ttl_ms": ttl, "tools": tools})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn a_list_is_taken_for_its_entry_while_it_is_fresh() {
        let tools = vec![tool("a"), tool("b")];
        let json: Vec<Value> = tools.iter().map(tool_json).collect();
        let bytes = file("e1", 1_000, 500, json!(json));
        assert_eq!(parse(&bytes, "e1", 1_200), Ok(tools));
        assert_eq!(parse(&bytes, "e2", 1_200), Err(NoList::OtherEntry));
        assert_eq!(parse(&bytes, "e1", 1_500), Err(NoList::Expired));
        // A clock that went back is no reason to trust it longer.
        assert_eq!(parse(&bytes, "e1", 900), Err(NoList::Expired));
        assert!(matches!(parse(b"{", "e1", 0), Err(NoList::Unreadable(_))));
        // An entry that is not a tool is left out; the others stay.
        let mixed = file(
            "e1",
            1_000,
            500,
            json!([{"name": 3}, tool_json(&tool("c"))]),
        );
        assert_eq!(parse(&mixed, "e1", 1_100), Ok(vec![tool("c")]));
    }

    #[test]
    fn the_entry_digest_changes_with_what_reaches_the_server_and_hides_it() {
        let mut config = ServerConfig::stdio("s", "server", vec!["--a".into()]);
        let before = entry_digest(&config);
        config.annotation_trust = crate::config::AnnotationTrust::Trust;
        assert_eq!(
            entry_digest(&config),
            before,
            "trust does not change the list"
        );
        config.env.insert("TOKEN".into(), "s3cr3t".into());
        let after = entry_digest(&config);
        assert_ne!(after, before);
        assert!(!after.contains("s3cr3t"));
    }
}
