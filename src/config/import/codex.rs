//! Codex's `config.toml`: every `[mcp_servers.NAME]` table (field names from codex-rs's
//! `RawMcpServerConfig`). A `command` makes a stdio server, a `url` a Streamable HTTP one.
//! Codex takes values literally, so a `${` in them is written `$${` here, as they are read;
//! `bearer_token_env_var` and `env_http_headers` name environment variables, which become
//! `${VAR}`.

use std::path::Path;
use std::time::Duration;

use toml_edit::{DocumentMut, Item, TableLike, Value};

use super::{ImportError, Source};

/// The servers of a Codex config.
pub(super) fn read(path: &Path, text: &str) -> Result<Vec<Source>, ImportError> {
    let doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| ImportError::Parse {
            path: path.to_path_buf(),
            what: "TOML",
            message: e.to_string().trim().to_string(),
        })?;
    let servers = doc
        .get("mcp_servers")
        .and_then(Item::as_table_like)
        .ok_or_else(|| ImportError::NoServers {
            path: path.to_path_buf(),
            why: "no [mcp_servers.NAME] tables (Codex's format)".to_string(),
        })?;
    Ok(servers
        .iter()
        .map(|(name, item)| {
            let mut source = match item.as_table_like() {
                Some(table) => source(table),
                None => Source {
                    kind: Some("(not a table)".to_string()),
                    ..Source::default()
                },
            };
            source.original = name.to_string();
            source
        })
        .collect())
}

fn text(item: &Item) -> Option<String> {
    match item.as_value()? {
        Value::String(s) => Some(s.value().clone()),
        Value::Integer(i) => Some(i.value().to_string()),
        Value::Float(f) => Some(f.value().to_string()),
        Value::Boolean(b) => Some(b.value().to_string()),
        Value::Datetime(_) | Value::Array(_) | Value::InlineTable(_) => None,
    }
}

fn seconds(item: &Item) -> Option<f64> {
    match item.as_value()? {
        Value::Integer(i) => Some(*i.value() as f64),
        Value::Float(f) => Some(*f.value()),
        Value::String(_)
        | Value::Boolean(_)
        | Value::Datetime(_)
        | Value::Array(_)
        | Value::InlineTable(_) => None,
    }
}

/// A literal value in this config's syntax.
fn literal(s: String) -> String {
    s.replace("${", "$${")
}

fn pairs(item: &Item, field: &str, notes: &mut Vec<String>) -> Vec<(String, String)> {
    let Some(table) = item.as_table_like() else {
        notes.push(format!("{field} is not a table: not carried"));
        return Vec::new();
    };
    table
        .iter()
        .filter_map(|(k, v)| match text(v) {
            Some(s) => Some((k.to_string(), s)),
            None => {
                notes.push(format!("{field}.{k} is not a string: not carried"));
                None
            }
        })
        .collect()
}

fn source(table: &dyn TableLike) -> Source {
    let mut s = Source::default();
    let mut timeouts: Vec<(&str, f64)> = Vec::new();
    for (key, item) in table.iter() {
        match key {
            "command" => s.command = text(item).map(literal),
            "args" => match item.as_array() {
                Some(args) => {
                    for (i, arg) in args.iter().enumerate() {
                        match text(&Item::Value(arg.clone())) {
                            Some(a) => s.args.push(literal(a)),
                            None => s.notes.push(format!("args[{i}] is not a string: left out")),
                        }
                    }
                }
                None => s.notes.push("args is not a list: not carried".to_string()),
            },
            "env" => {
                s.env = pairs(item, "env", &mut s.notes)
                    .into_iter()
                    .map(|(k, v)| (k, literal(v)))
                    .collect()
            }
            "env_vars" => s.notes.push(
                "env_vars not needed: every server gets the whole environment here".to_string(),
            ),
            "cwd" => s.cwd = text(item).map(literal),
            "url" => s.url = text(item).map(literal),
            "bearer_token" => s.bearer_token = text(item).map(literal),
            "bearer_token_env_var" => {
                if let Some(var) = text(item) {
                    s.bearer_token = Some(format!("${{{var}}}"));
                }
            }
            "http_headers" => {
                let headers = pairs(item, "http_headers", &mut s.notes);
                s.headers
                    .extend(headers.into_iter().map(|(h, v)| (h, literal(v))));
            }
            "env_http_headers" => {
                let headers = pairs(item, "env_http_headers", &mut s.notes);
                s.headers.extend(
                    headers
                        .into_iter()
                        .map(|(h, var)| (h, format!("${{{var}}}"))),
                );
            }
            "enabled" => s.enabled = item.as_bool(),
            "startup_timeout_sec" | "tool_timeout_sec" => {
                if let Some(secs) = seconds(item) {
                    timeouts.push((key, secs));
                }
            }
            "startup_timeout_ms" => {
                if let Some(ms) = seconds(item) {
                    timeouts.push((key, ms / 1000.0));
                }
            }
            other => s.dropped.push(other.to_string()),
        }
    }
    if let Some(longest) = timeouts
        .iter()
        .map(|(_, secs)| *secs)
        .filter(|secs| secs.is_finite() && *secs > 0.0)
        .reduce(f64::max)
    {
        let keys: Vec<&str> = timeouts.iter().map(|(k, _)| *k).collect();
        s.request_timeout = Some(Duration::from_millis((longest * 1000.0).round() as u64));
        s.notes.push(format!(
            "request_timeout is the longest of {}: here one timeout covers every request",
            keys.join(", ")
        ));
    }
    s
}
