//! Importing the MCP servers other clients already know: Claude Desktop's
//! `claude_desktop_config.json` and Claude Code's `.mcp.json` (`mcpServers`), VS Code's
//! `.vscode/mcp.json` (`servers`, `inputs`), Codex's `config.toml` (`[mcp_servers.NAME]`).
//!
//! Each format is read into [`Source`]s (`json.rs`, `codex.rs`), each turned into one entry of
//! `mcp.servers` in this config's terms: a name that follows the server-name rule (and is not
//! taken), the transport, command, args, env, cwd, url, headers and token, with each format's
//! `${…}` variables rewritten into ours. Every change made on the way (a name, a variable, a
//! field that has no counterpart here) is a note, written as a comment above the entry.
//! Writing the entries into the file is `write.rs`'s job; this module only reads.

mod codex;
mod json;
mod secrets;
mod vars;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_yaml::{Mapping, Value};

use super::values::{is_valid_server_name, SERVER_NAME_RULE};
use crate::text::sanitize_line;
use vars::Vars;

/// Where a file to import comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `claude_desktop_config.json`: `mcpServers`, values taken literally.
    ClaudeDesktop,
    /// Claude Code's `.mcp.json`: `mcpServers`, with `${VAR}` and `${VAR:-default}`.
    ClaudeCode,
    /// VS Code's `mcp.json`: `servers` and `inputs`, with `${env:…}`, `${input:…}`, …
    VsCode,
    /// Codex's `config.toml`: `[mcp_servers.NAME]`.
    Codex,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::ClaudeDesktop => "Claude Desktop",
            Format::ClaudeCode => "Claude Code .mcp.json",
            Format::VsCode => "VS Code",
            Format::Codex => "Codex config.toml",
        }
    }
}

/// Why a file could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path}: not valid {what}: {message}")]
    Parse {
        path: PathBuf,
        what: &'static str,
        message: String,
    },
    #[error("{path}: {why}")]
    NoServers { path: PathBuf, why: String },
}

/// One server as another client describes it, before it is made into an entry.
#[derive(Debug, Default)]
struct Source {
    /// Its name there.
    original: String,
    /// `type` as written there (`stdio`, `http`, `sse`), if any.
    kind: Option<String>,
    command: Option<String>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: Option<String>,
    url: Option<String>,
    headers: Vec<(String, String)>,
    bearer_token: Option<String>,
    request_timeout: Option<Duration>,
    enabled: Option<bool>,
    /// Fields it has that have no counterpart here.
    dropped: Vec<String>,
    notes: Vec<String>,
}

/// One imported server.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedServer {
    /// Its name in the file it came from.
    pub original: String,
    /// Its name here.
    pub name: String,
    /// The `mcp.servers` entry.
    pub entry: Value,
    /// What changed on the way, one sentence each (the first says where it came from).
    pub notes: Vec<String>,
}

/// What a file gave.
#[derive(Debug)]
pub struct Import {
    pub format: Format,
    pub servers: Vec<ImportedServer>,
    /// Servers that could not be imported: their name there, and why.
    pub skipped: Vec<(String, String)>,
    /// Servers the config has already (see `same_server`): their name there, and their name
    /// here. Not added again, so importing a file twice adds nothing.
    pub present: Vec<(String, String)>,
}

/// Reads the servers of the file at `path` (its `text`), in `format` or the one its name and
/// content say. `existing` are the config's `mcp.servers` entries: an imported server never
/// takes one of their names, and one that is already there is not imported again.
pub fn read(
    path: &Path,
    text: &str,
    format: Option<Format>,
    existing: &[Value],
) -> Result<Import, ImportError> {
    let format = match format {
        Some(f) => f,
        None => detect(path, text),
    };
    let (sources, vars) = match format {
        Format::Codex => (codex::read(path, text)?, Vars::Ours),
        Format::ClaudeDesktop | Format::ClaudeCode | Format::VsCode => {
            json::read(path, text, format)?
        }
    };
    if sources.is_empty() {
        return Err(ImportError::NoServers {
            path: path.to_path_buf(),
            why: format!("no servers in it (read as {})", format.as_str()),
        });
    }
    let base = vars.base(path);
    let mut taken: BTreeSet<String> = existing
        .iter()
        .filter_map(|e| e.get("name").and_then(Value::as_str).map(str::to_string))
        .collect();
    let mut servers = Vec::new();
    let mut skipped = Vec::new();
    let mut present = Vec::new();
    for source in sources {
        let original = source.original.clone();
        match assemble(source, &vars, &base, &mut taken, path, format) {
            Ok(server) => match existing.iter().find(|e| same_server(e, &server.entry)) {
                Some(there) => {
                    // Not added: the name it was given stays free for the next one.
                    taken.remove(&server.name);
                    let name = there.get("name").and_then(Value::as_str).unwrap_or("");
                    present.push((original, name.to_string()));
                }
                None => servers.push(server),
            },
            Err(why) => skipped.push((original, why)),
        }
    }
    Ok(Import {
        format,
        servers,
        skipped,
        present,
    })
}

/// Whether two `mcp.servers` entries reach the same server the same way: the same transport
/// (stdio when not written), command, args, cwd, env, url, headers and bearer token (two
/// entries of one command with other tokens in `env` are two accounts). The name, trust,
/// timeouts and the rest may differ: the operator may have set them since.
fn same_server(a: &Value, b: &Value) -> bool {
    fn transport(v: &Value) -> &str {
        v.get("transport")
            .and_then(Value::as_str)
            .unwrap_or("stdio")
    }
    fn args(v: &Value) -> &[Value] {
        v.get("args")
            .and_then(Value::as_sequence)
            .map_or(&[], Vec::as_slice)
    }
    transport(a) == transport(b)
        && args(a) == args(b)
        && ["command", "cwd", "env", "url", "headers", "bearer_token"]
            .iter()
            .all(|key| a.get(key) == b.get(key))
}

/// The format a file is in: a `.toml` is Codex's; JSON with `mcpServers` is Claude's (Desktop's
/// when the file is called so); anything else is taken for VS Code's.
fn detect(path: &Path, text: &str) -> Format {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".toml") {
        return Format::Codex;
    }
    if json::has_key(text, "mcpServers") {
        if name == "claude_desktop_config.json" {
            Format::ClaudeDesktop
        } else {
            Format::ClaudeCode
        }
    } else if json::has_key(text, "servers") || json::has_key(text, "mcp") {
        Format::VsCode
    } else if text.trim_start().starts_with(['{', '/']) {
        Format::ClaudeCode
    } else {
        Format::Codex
    }
}

/// A server name that follows [`SERVER_NAME_RULE`], made from `original`: lowercase, every run
/// of other characters one `-`, none at either end.
pub fn server_name(original: &str) -> String {
    let mut name = String::new();
    for c in original.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            name.push(c);
        } else if !name.ends_with('-') {
            name.push('-');
        }
    }
    let name = name.trim_matches('-').to_string();
    if name.is_empty() {
        "server".to_string()
    } else {
        name
    }
}

fn quoted(original: &str) -> String {
    format!("{:?}", sanitize_line(original, 80))
}

/// A URL with a user name or password, which the config refuses (it would show on screen),
/// becomes the URL without them and an `Authorization: Basic` header, so the server is still
/// sent them. Not imported: one that also sets `Authorization` (which one the server got is
/// unclear), and one whose user name or password is a variable of its format (encoded, it
/// could no longer be filled in).
fn move_credentials(
    source: &mut Source,
    vars: &Vars,
    notes: &mut Vec<String>,
) -> Result<(), String> {
    use base64::Engine;
    let Some((scheme, userinfo, after)) = source
        .url
        .as_deref()
        .and_then(crate::config::agent_load::split_userinfo)
    else {
        return Ok(());
    };
    let url = format!("{scheme}{after}");
    if userinfo.trim_matches(':').is_empty() {
        // `https://@host`, `https://:@host`: nothing is sent for these.
        source.url = Some(url);
        return Ok(());
    }
    if !matches!(vars, Vars::Literal) && userinfo.contains('$') {
        return Err(
            "its url's user name or password is a variable: give an Authorization header instead"
                .to_string(),
        );
    }
    let authorized = source.bearer_token.is_some()
        || source
            .headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
    if authorized {
        return Err(
            "its url holds a user name or password and it sets Authorization too".to_string(),
        );
    }
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let basic = base64::engine::general_purpose::STANDARD.encode(format!(
        "{}:{}",
        decode(user),
        decode(password)
    ));
    source
        .headers
        .push(("Authorization".to_string(), format!("Basic {basic}")));
    source.url = Some(url);
    notes.push(
        "the user name and password in its url are sent as an Authorization: Basic header, `Basic ` and the base64 of `user:password` (a url here may not hold them: it is shown on screen)"
            .to_string(),
    );
    Ok(())
}

/// Makes one entry of `source`, or says why it cannot be one.
fn assemble(
    mut source: Source,
    vars: &Vars,
    base: &Option<PathBuf>,
    taken: &mut BTreeSet<String>,
    path: &Path,
    format: Format,
) -> Result<ImportedServer, String> {
    let mut notes = vec![format!(
        "imported from {} ({}): {}",
        sanitize_line(&path.display().to_string(), 200),
        format.as_str(),
        quoted(&source.original)
    )];
    let transport = match source.kind.as_deref() {
        None if source.command.is_some() => "stdio",
        None if source.url.is_some() => "streamable_http",
        None => return Err("it has neither a command nor a url".to_string()),
        Some("stdio") => "stdio",
        Some("http" | "streamable-http" | "streamable_http" | "streamableHttp") => {
            "streamable_http"
        }
        Some("sse") => "sse",
        Some(other) => return Err(format!("unknown type {}", quoted(other))),
    };
    let stdio = transport == "stdio";
    if stdio && source.command.is_none() {
        return Err("type stdio but no command".to_string());
    }
    if !stdio && source.url.is_none() {
        return Err(format!("type {transport} but no url"));
    }
    if !stdio {
        move_credentials(&mut source, vars, &mut notes)?;
    }
    // Fields of the other transport are not carried (the config refuses them).
    let other_side: Vec<&str> = if stdio {
        [
            ("url", source.url.is_some()),
            ("headers", !source.headers.is_empty()),
            ("bearer token", source.bearer_token.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, set)| set.then_some(k))
        .collect()
    } else {
        [
            ("command", source.command.is_some()),
            ("args", !source.args.is_empty()),
            ("env", !source.env.is_empty()),
            ("cwd", source.cwd.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, set)| set.then_some(k))
        .collect()
    };
    if !other_side.is_empty() {
        notes.push(format!(
            "not carried: {} (a {transport} server does not use them)",
            other_side.join(", ")
        ));
    }

    // The name.
    let mut name = server_name(&source.original);
    if name != source.original {
        notes.push(format!(
            "renamed {} to {name}: server names must match {SERVER_NAME_RULE}",
            quoted(&source.original)
        ));
    }
    if taken.contains(&name) {
        let base_name = name.clone();
        let mut n = 2;
        while taken.contains(&format!("{base_name}-{n}")) {
            n += 1;
        }
        name = format!("{base_name}-{n}");
        notes.push(format!(
            "named {name}: the config already has a server named {base_name}"
        ));
    }
    debug_assert!(is_valid_server_name(&name));
    taken.insert(name.clone());

    let mut map = Mapping::new();
    let mut put = |key: &str, value: Value| {
        map.insert(Value::String(key.to_string()), value);
    };
    let mut text = |s: &str| Value::String(vars.convert(s, &mut source.notes));
    let mut moved = secrets::Moved::default();
    put("name", Value::String(name.clone()));
    if !stdio {
        put("transport", Value::String(transport.to_string()));
    }
    if stdio {
        if let Some(command) = &source.command {
            put("command", text(command));
        }
        if !source.args.is_empty() {
            let args = source.args.iter().map(|a| text(a)).collect();
            put("args", Value::Sequence(args));
        }
        if !source.env.is_empty() {
            let env = source
                .env
                .iter()
                .map(|(k, v)| {
                    let v = vars.convert(v, &mut source.notes);
                    let v = moved.value(&name, k, &format!("env {k}"), v);
                    (Value::String(k.clone()), Value::String(v))
                })
                .collect();
            put("env", Value::Mapping(env));
        }
        if let Some(cwd) = &source.cwd {
            let converted = vars.convert(cwd, &mut source.notes);
            // The config reads a relative cwd against its own folder: make it absolute
            // against the file it came from instead.
            let cwd = match base {
                Some(base) if !converted.starts_with('/') && !converted.starts_with("${") => {
                    base.join(&converted).display().to_string()
                }
                Some(_) | None => converted,
            };
            put("cwd", Value::String(cwd));
        }
    } else {
        if let Some(url) = &source.url {
            put("url", text(url));
        }
        if !source.headers.is_empty() {
            let headers = source
                .headers
                .iter()
                .map(|(k, v)| {
                    let v = vars.convert(v, &mut source.notes);
                    let v = moved.value(&name, k, &format!("header {k}"), v);
                    (Value::String(k.clone()), Value::String(v))
                })
                .collect();
            put("headers", Value::Mapping(headers));
        }
        if let Some(token) = &source.bearer_token {
            let token = vars.convert(token, &mut source.notes);
            let token = moved.secret(&name, "bearer token", "bearer token", token);
            put("bearer_token", Value::String(token));
        }
    }
    if let Some(timeout) = source.request_timeout {
        put("request_timeout", Value::String(duration_text(timeout)));
    }
    if source.enabled == Some(false) {
        put("enabled", Value::Bool(false));
    }
    if !source.dropped.is_empty() {
        source.dropped.sort();
        source.dropped.dedup();
        notes.push(format!(
            "not carried (no counterpart here): {}",
            source.dropped.join(", ")
        ));
    }
    for note in source.notes.into_iter().chain(moved.note()) {
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    Ok(ImportedServer {
        original: source.original,
        name,
        entry: Value::Mapping(map),
        notes: notes.iter().map(|n| sanitize_line(n, 400)).collect(),
    })
}

/// `servers` as a config of their own (`mcp:`, `servers:`, then each entry with its notes as
/// comments): how they read when the config's list is in flow style, where the entries are
/// added without their comments.
pub fn as_yaml(servers: &[ImportedServer]) -> String {
    let mut out = String::from("mcp:\n  servers:\n");
    for server in servers {
        out.push_str(&crate::config::emit::sequence_item(
            &server.entry,
            4,
            2,
            2,
            &server.notes,
        ));
    }
    out
}

/// A duration as the config writes it: `30s`, `1500ms`.
fn duration_text(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
