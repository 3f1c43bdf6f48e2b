//! Loading the config: find the file, read it, check its shape, deserialize it, validate it and
//! expand `${VAR}`, with every error located as `file:line:col` and every error found reported,
//! not only the first.
//!
//! `syntax.rs` locates YAML syntax errors; `schema.rs` checks the shape (unknown keys, types,
//! enum values) over the parsed document; serde_yaml then decodes the text into `raw.rs`'s
//! types; the [`Spans`] index locates everything checked afterwards (names, durations,
//! transport requirements, variables).

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use super::agent_load::agent_config;
use super::context::Context;
use super::error::{ConfigError, ConfigErrorKind};
use super::hooks::hook_list;
use super::raw::{LocalTool, RawConfig, RawMcp, RawServer};
use super::rewake::rewake_rules;
use super::rules::approval_rules;
use super::schema;
use super::spans::{child_path, index_path, Position, Spans};
use super::syntax::syntax_error;
use super::values::{is_blank, is_valid_server_name, relative_to, SERVER_NAME_RULE};
use super::{
    Config, LocalTools, McpConfig, NotificationsConfig, PolicyConfig, ServerConfig, TransportKind,
};

/// `request_timeout` when the config gives none.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Read the file at `path` and load it with the real environment. `${AIMON_CONSOLE}` is the
/// `AIMON_CONSOLE` variable if set, else the running binary.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::read(path, e))?;
    let env = |name: &str| {
        std::env::var_os(name)
            .map(|v| v.to_string_lossy().into_owned())
            .or_else(|| {
                (name == "AIMON_CONSOLE")
                    .then(std::env::current_exe)
                    .and_then(Result::ok)
                    .map(|exe| exe.to_string_lossy().into_owned())
            })
    };
    load_str(path, &text, &env)
}

/// Load config `text` that was read from `path`, looking `${VAR}`s up through `env`. Errors name
/// `path` as given; `Config::path` is made absolute. Every mistake found is reported (see
/// [`ConfigError::all`]): all unknown keys and wrong types at once, else all invalid values.
/// A YAML syntax error stops everything, since nothing after it can be read.
pub fn load_str(
    path: &Path,
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let spans = Spans::parse(text).map_err(|e| syntax_error(path, text, e))?;
    let empty = is_empty_document(&spans, text);
    let value: serde_yaml::Value = if empty {
        serde_yaml::Value::Null
    } else {
        serde_yaml::from_str(text).map_err(|e| serde_error(path, &spans, &e))?
    };
    if let Some(err) = ConfigError::many(schema::check(&value, &spans, path)) {
        return Err(err);
    }
    // Decoded from the text, not the value: a number written where a string goes is taken as
    // written (`2.50` stays "2.50").
    let raw = if empty {
        RawConfig::default()
    } else {
        serde_yaml::from_str::<RawConfig>(text).map_err(|e| serde_error(path, &spans, &e))?
    };
    let cx = Context::new(path, &spans, env);
    let absolute = std::path::absolute(path).map_err(|e| ConfigError::read(path, e))?;
    let base = absolute.parent().unwrap_or(Path::new("/")).to_path_buf();
    let raw_mcp = raw.mcp.unwrap_or_default();
    // Rules may name any server written in the file, valid or not: a server with a mistake of
    // its own is reported once, not again by every rule naming it.
    let names: Vec<String> = raw_mcp
        .servers
        .iter()
        .flatten()
        .map(|s| s.name.clone())
        .collect();
    let mcp = cx.mcp(raw_mcp, &base);
    let policy = raw.policy.unwrap_or_default();
    let rewake = raw.notifications.unwrap_or_default().rewake;
    let notifications = NotificationsConfig {
        rewake: rewake_rules(&cx, rewake.unwrap_or_default(), &names),
    };
    let rules = approval_rules(&cx, policy.rules.unwrap_or_default(), &names);
    let bash_sandbox = match policy.bash_sandbox {
        Some(raw) => {
            super::sandbox::sandbox(&cx, "policy.bash_sandbox", raw, &base).unwrap_or_default()
        }
        None => super::SandboxConfig::default(),
    };
    let hooks = hook_list(&cx, raw.hooks.unwrap_or_default(), &names, &base);
    let gateway = super::gateway::gateway(&cx, raw.gateway);
    let telemetry = super::telemetry::telemetry(&cx, raw.telemetry);
    let daemon = super::daemon::daemon(&cx, raw.daemon, &base);
    let agent = value
        .get("agent")
        .and_then(|section| agent_config(&cx, section, raw.agent.unwrap_or_default(), &base));
    if let Some(err) = ConfigError::many(cx.into_errors()) {
        return Err(err);
    }
    Ok(Config {
        path: absolute,
        mcp,
        notifications,
        hooks,
        agent,
        gateway,
        telemetry,
        daemon,
        policy: PolicyConfig {
            side_effect_ceiling: policy.side_effect_ceiling.unwrap_or_default(),
            approval: policy.approval.unwrap_or_default(),
            local_tools: local_tools(policy.local_tools),
            rules,
            flagged: policy.flagged.unwrap_or_default(),
            bash_sandbox,
        },
        source_digest: super::write::digest(text),
    })
}

/// `policy.local_tools` as written; `read` alone when not given.
fn local_tools(raw: Option<Vec<LocalTool>>) -> LocalTools {
    let Some(listed) = raw else {
        return LocalTools::default();
    };
    let mut tools = LocalTools::NONE;
    for tool in listed {
        match tool {
            LocalTool::Read => tools.read = true,
            LocalTool::Bash => tools.bash = true,
        }
    }
    tools
}

/// The `file://` URI of an absolute path; bytes other than unreserved ones and `/` are
/// percent-encoded.
pub fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'.' | b'_' | b'~') {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// A document with no content (empty, comments only, or a bare `~`/`null`) is an empty config.
fn is_empty_document(spans: &Spans, text: &str) -> bool {
    match spans.get("") {
        None => true,
        Some(root) => {
            let value = text.get(root.start.offset..root.end.offset).unwrap_or("");
            matches!(value.trim(), "" | "~" | "null" | "Null" | "NULL")
        }
    }
}

/// A serde_yaml error as a located [`ConfigError`]; its own " at line L column C" suffix is
/// dropped since the location leads.
fn serde_error(path: &Path, spans: &Spans, err: &serde_yaml::Error) -> ConfigError {
    let mut message = err.to_string();
    let position = match err.location() {
        Some(loc) => {
            let suffix = format!(" at line {} column {}", loc.line(), loc.column());
            if let Some(stripped) = message.strip_suffix(&suffix) {
                message = stripped.to_string();
            }
            Position {
                line: loc.line(),
                column: loc.column(),
                offset: loc.index(),
            }
        }
        None => spans.value("").unwrap_or(Position {
            line: 1,
            column: 1,
            offset: 0,
        }),
    };
    ConfigError::at(ConfigErrorKind::Schema, path, position, message)
}

impl Context<'_> {
    fn mcp(&self, raw: RawMcp, base: &Path) -> McpConfig {
        let startup_budget = raw
            .startup_budget
            .as_ref()
            .and_then(|d| self.keep(self.duration("mcp.startup_budget", d)));
        let max_concurrent_starts =
            match raw.max_concurrent_starts {
                None => None,
                Some(0) => {
                    self.report(self.error(
                    ConfigErrorKind::Invalid,
                    "mcp.max_concurrent_starts",
                    "mcp.max_concurrent_starts: must be at least 1 (leave it out for no limit)"
                        .to_string(),
                ));
                    None
                }
                Some(n) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            };
        let mut servers = Vec::new();
        let mut first_seen: HashMap<String, Position> = HashMap::new();
        for (i, server) in raw.servers.unwrap_or_default().into_iter().enumerate() {
            let node = index_path("mcp.servers", i);
            let name_node = child_path(&node, "name");
            let name_at = self.value_at(&name_node);
            if let Some(first) = first_seen.get(&server.name) {
                self.report(self.at(
                    ConfigErrorKind::DuplicateName,
                    name_at,
                    format!(
                        "duplicate server name {:?} (first defined at {})",
                        server.name,
                        self.place(*first)
                    ),
                ));
                continue;
            }
            first_seen.insert(server.name.clone(), name_at);
            if let Some(server) = self.server(&node, server, base) {
                servers.push(server);
            }
        }
        let roots = match raw.roots {
            // The default: the folder the config file is in.
            None => vec![file_uri(base)],
            Some(list) => list
                .iter()
                .enumerate()
                .filter_map(|(i, root)| {
                    self.keep(self.root(&index_path("mcp.roots", i), root, base))
                })
                .collect(),
        };
        McpConfig {
            servers,
            startup_budget,
            max_concurrent_starts,
            roots,
        }
    }

    /// One `mcp.roots` entry: a `file://` URI as is, or a folder (relative to the config
    /// file's folder) made into one.
    fn root(&self, node: &str, raw: &str, base: &Path) -> Result<String, ConfigError> {
        let value = self.expand(node, raw)?;
        if value.starts_with("file://") {
            return Ok(value);
        }
        if value.trim().is_empty() || value.contains("://") {
            return Err(self.error(
                ConfigErrorKind::Invalid,
                node,
                format!("root {value:?} must be a folder or a file:// URI"),
            ));
        }
        Ok(file_uri(&relative_to(base, Path::new(&value))))
    }

    /// One server entry, or `None` when it has mistakes (each recorded).
    fn server(&self, node: &str, raw: RawServer, base: &Path) -> Option<ServerConfig> {
        let before = self.error_count();
        let name_node = child_path(node, "name");
        if !is_valid_server_name(&raw.name) {
            self.report(self.error(
                ConfigErrorKind::Invalid,
                &name_node,
                format!(
                    "invalid server name {:?}: a name must match {SERVER_NAME_RULE} (lowercase letters, digits and inner hyphens)",
                    raw.name
                ),
            ));
        }
        let entry_at = self
            .spans
            .key(&name_node)
            .unwrap_or_else(|| self.value_at(node));
        let transport = raw.transport.unwrap_or(TransportKind::Stdio);
        let missing = |field: &str| {
            self.at(
                ConfigErrorKind::Invalid,
                entry_at,
                format!(
                    "server {:?} uses transport {} but has no `{field}`",
                    raw.name,
                    transport.as_str()
                ),
            )
        };
        match transport {
            TransportKind::Stdio if is_blank(raw.command.as_deref()) => {
                self.report(missing("command"))
            }
            TransportKind::StreamableHttp | TransportKind::Sse if is_blank(raw.url.as_deref()) => {
                self.report(missing("url"))
            }
            TransportKind::Stdio | TransportKind::StreamableHttp | TransportKind::Sse => {}
        }
        let field = |name: &str| child_path(node, name);
        // Keys of the other kind of transport would be silently ignored: refuse them instead.
        let present: [(&str, bool); 9] = [
            ("command", raw.command.is_some()),
            ("sandbox", raw.sandbox.is_some()),
            ("args", raw.args.is_some()),
            ("env", raw.env.is_some()),
            ("cwd", raw.cwd.is_some()),
            ("url", raw.url.is_some()),
            ("headers", raw.headers.is_some()),
            ("bearer_token", raw.bearer_token.is_some()),
            ("oauth", raw.oauth.is_some()),
        ];
        for (key, is_set) in present {
            let http_only = matches!(key, "url" | "headers" | "bearer_token" | "oauth");
            if is_set && http_only != transport.is_http() {
                let at = self.key_at(&field(key));
                let belongs = if http_only {
                    "streamable_http and sse servers"
                } else {
                    "stdio servers"
                };
                self.report(self.at(
                    ConfigErrorKind::Invalid,
                    at,
                    format!(
                        "server {:?} uses transport {} but sets `{key}`, which only {belongs} use",
                        raw.name,
                        transport.as_str()
                    ),
                ));
            }
        }
        let opt = |name: &str, value: Option<String>| {
            value.and_then(|v| self.keep(self.expand(&field(name), &v)))
        };
        let command = opt("command", raw.command);
        let url = opt("url", raw.url);
        let cwd = opt("cwd", raw.cwd).map(|dir| relative_to(base, Path::new(&dir)));
        let args: Vec<String> = raw
            .args
            .unwrap_or_default()
            .iter()
            .enumerate()
            .filter_map(|(j, arg)| self.keep(self.expand(&index_path(&field("args"), j), arg)))
            .collect();
        let env = self.map(&field("env"), raw.env.unwrap_or_default());
        if let Some(url) = &url {
            if super::agent_load::has_userinfo(url) {
                // Not quoted: the URL holds a secret.
                self.report(self.error(
                    ConfigErrorKind::Invalid,
                    &field("url"),
                    "url: a user name or password in the URL would be shown on screen, in logs and in errors: give them as a header under headers (Authorization: Basic …), or use bearer_token".to_string(),
                ));
            } else if !(url.starts_with("http://") || url.starts_with("https://")) {
                self.report(self.error(
                    ConfigErrorKind::Invalid,
                    &field("url"),
                    format!("url {url:?} must start with http:// or https://"),
                ));
            }
        }
        let headers = self.headers(&field("headers"), raw.headers.unwrap_or_default());
        let bearer_token = opt("bearer_token", raw.bearer_token);
        if let Some(token) = &bearer_token {
            if token.trim().is_empty()
                || http::HeaderValue::from_str(&format!("Bearer {token}")).is_err()
            {
                self.report(self.error(
                    ConfigErrorKind::Invalid,
                    &field("bearer_token"),
                    "bearer_token is empty or not a valid header value (control characters or non-ASCII)".to_string(),
                ));
            }
        }
        // OAuth is for Streamable HTTP, and replaces a static token.
        let oauth = raw.oauth.and_then(|block| {
            if transport != TransportKind::StreamableHttp {
                self.report(self.at(
                    ConfigErrorKind::Invalid,
                    self.key_at(&field("oauth")),
                    format!(
                        "server {:?} uses transport {} but sets `oauth`, which only streamable_http servers use",
                        raw.name,
                        transport.as_str()
                    ),
                ));
                return None;
            }
            if bearer_token.is_some() {
                self.report(self.at(
                    ConfigErrorKind::Invalid,
                    self.key_at(&field("oauth")),
                    format!(
                        "server {:?} sets both `bearer_token` and `oauth`: a static token or an OAuth login, not both",
                        raw.name
                    ),
                ));
                return None;
            }
            self.keep(self.oauth(&field("oauth"), &raw.name, block, base))
        });
        let request_timeout = match &raw.request_timeout {
            Some(d) => self
                .keep(self.duration(&field("request_timeout"), d))
                .unwrap_or(DEFAULT_REQUEST_TIMEOUT),
            None => DEFAULT_REQUEST_TIMEOUT,
        };
        let sandbox = raw
            .sandbox
            .and_then(|block| super::sandbox::sandbox(self, &field("sandbox"), block, base));
        let roots = raw.roots.map(|list| {
            list.iter()
                .enumerate()
                .filter_map(|(i, root)| {
                    self.keep(self.root(&index_path(&field("roots"), i), root, base))
                })
                .collect::<Vec<_>>()
        });
        if self.error_count() > before {
            return None;
        }
        Some(ServerConfig {
            name: raw.name,
            transport,
            command,
            args,
            env,
            cwd,
            url,
            headers,
            bearer_token,
            oauth,
            request_timeout,
            annotation_trust: raw.annotation_trust.unwrap_or_default(),
            restart: raw.restart.unwrap_or_default(),
            start: raw.start.unwrap_or_default(),
            enabled: raw.enabled.unwrap_or(true),
            roots,
            sandbox,
        })
    }
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "load_errors_tests.rs"]
mod error_tests;
