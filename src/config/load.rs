//! Loading the config: find the file, read it, deserialize it strictly, validate it and expand
//! `${VAR}`, with every error located as `file:line:col`.
//!
//! serde_yaml does the typed decoding (unknown keys, types, enum values); the [`Spans`] index
//! locates everything checked afterwards (names, durations, transport requirements, variables).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use super::agent_load::{agent_config, RawAgent};
use super::duration::parse_duration;
use super::error::{ConfigError, ConfigErrorKind};
use super::expand::{expand, ExpandError};
use super::rewake::{rewake_rules, RawNotifications};
use super::spans::{child_path, index_path, Position, Spans};
use super::{
    AnnotationTrust, ApprovalPolicy, Config, McpConfig, NotificationsConfig, PolicyConfig,
    RestartPolicy, ServerConfig, SideEffectCeiling, TransportKind,
};

/// `request_timeout` when the config gives none.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The rule a server name must follow, as shown in errors.
pub const SERVER_NAME_RULE: &str = "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$";

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
/// `path` as given; `Config::path` is made absolute.
pub fn load_str(
    path: &Path,
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let spans = Spans::parse(text).map_err(|e| {
        ConfigError::at(
            ConfigErrorKind::Syntax,
            path,
            e.position,
            format!("invalid YAML: {}", e.message),
        )
    })?;
    let raw = if is_empty_document(&spans, text) {
        RawConfig::default()
    } else {
        serde_yaml::from_str::<RawConfig>(text).map_err(|e| serde_error(path, &spans, &e))?
    };
    let cx = Context {
        path,
        spans: &spans,
        env,
    };
    let absolute = std::path::absolute(path).map_err(|e| ConfigError::read(path, e))?;
    let base = absolute.parent().unwrap_or(Path::new("/")).to_path_buf();
    let mcp = cx.mcp(raw.mcp.unwrap_or_default(), &base)?;
    let policy = raw.policy.unwrap_or_default();
    let rewake = raw.notifications.unwrap_or_default().rewake;
    let notifications = NotificationsConfig {
        rewake: rewake_rules(&cx, rewake.unwrap_or_default(), &mcp.servers)?,
    };
    let agent = raw
        .agent
        .map(|agent| agent_config(&cx, agent, &base))
        .transpose()?;
    Ok(Config {
        path: absolute,
        mcp,
        notifications,
        agent,
        policy: PolicyConfig {
            side_effect_ceiling: policy.side_effect_ceiling.unwrap_or_default(),
            approval: policy.approval.unwrap_or_default(),
        },
        source_digest: super::write::digest(text),
    })
}

/// Whether a server name follows [`SERVER_NAME_RULE`].
pub fn is_valid_server_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let inner_ok = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-';
    let end_ok = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => end_ok(first) && end_ok(last) && bytes.iter().all(inner_ok),
        _ => false,
    }
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

/// A missing or whitespace-only value.
pub(super) fn is_blank(value: Option<&str>) -> bool {
    value.is_none_or(|v| v.trim().is_empty())
}

/// `path` made absolute against `base`, without `.` components (`..` is kept: it may cross a
/// symlink).
pub(super) fn relative_to(base: &Path, path: &Path) -> PathBuf {
    base.join(path)
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
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

/// What the checks after deserialization need: the file, its location index and the variables.
pub(super) struct Context<'a> {
    path: &'a Path,
    pub(super) spans: &'a Spans,
    env: &'a dyn Fn(&str) -> Option<String>,
}

impl Context<'_> {
    /// Where the value at `node` starts; falls back to its parents, then to 1:1.
    pub(super) fn value_at(&self, node: &str) -> Position {
        let mut path = node;
        loop {
            if let Some(position) = self.spans.value(path) {
                return position;
            }
            match path.rfind(['.', '[']) {
                Some(cut) => path = &path[..cut],
                None => {
                    return self.spans.value("").unwrap_or(Position {
                        line: 1,
                        column: 1,
                        offset: 0,
                    })
                }
            }
        }
    }

    pub(super) fn error(&self, kind: ConfigErrorKind, node: &str, message: String) -> ConfigError {
        ConfigError::at(kind, self.path, self.value_at(node), message)
    }

    /// An error at `position`.
    pub(super) fn at(&self, kind: ConfigErrorKind, at: Position, message: String) -> ConfigError {
        ConfigError::at(kind, self.path, at, message)
    }

    fn place(&self, position: Position) -> String {
        format!(
            "{}:{}:{}",
            self.path.display(),
            position.line,
            position.column
        )
    }

    /// Expand `${VAR}`s in the string value at `node`.
    pub(super) fn expand(&self, node: &str, value: &str) -> Result<String, ConfigError> {
        expand(value, self.env).map_err(|e: ExpandError| {
            self.error(ConfigErrorKind::Expansion, node, format!("{e} (in {node})"))
        })
    }

    pub(super) fn duration(&self, node: &str, raw: &DurationText) -> Result<Duration, ConfigError> {
        parse_duration(&raw.0)
            .map_err(|e| self.error(ConfigErrorKind::Invalid, node, format!("{node}: {e}")))
    }

    fn mcp(&self, raw: RawMcp, base: &Path) -> Result<McpConfig, ConfigError> {
        let startup_budget = raw
            .startup_budget
            .as_ref()
            .map(|d| self.duration("mcp.startup_budget", d))
            .transpose()?;
        let max_concurrent_starts = match raw.max_concurrent_starts {
            None => None,
            Some(0) => {
                return Err(self.error(
                    ConfigErrorKind::Invalid,
                    "mcp.max_concurrent_starts",
                    "mcp.max_concurrent_starts: must be at least 1 (leave it out for no limit)"
                        .to_string(),
                ))
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
                return Err(ConfigError::at(
                    ConfigErrorKind::DuplicateName,
                    self.path,
                    name_at,
                    format!(
                        "duplicate server name {:?} (first defined at {})",
                        server.name,
                        self.place(*first)
                    ),
                ));
            }
            first_seen.insert(server.name.clone(), name_at);
            servers.push(self.server(&node, server, base)?);
        }
        let roots = match raw.roots {
            // The default: the folder the config file is in.
            None => vec![file_uri(base)],
            Some(list) => list
                .iter()
                .enumerate()
                .map(|(i, root)| self.root(&index_path("mcp.roots", i), root, base))
                .collect::<Result<_, _>>()?,
        };
        Ok(McpConfig {
            servers,
            startup_budget,
            max_concurrent_starts,
            roots,
        })
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

    fn server(&self, node: &str, raw: RawServer, base: &Path) -> Result<ServerConfig, ConfigError> {
        let name_node = child_path(node, "name");
        if !is_valid_server_name(&raw.name) {
            return Err(self.error(
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
            ConfigError::at(
                ConfigErrorKind::Invalid,
                self.path,
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
                return Err(missing("command"))
            }
            TransportKind::StreamableHttp | TransportKind::Sse if is_blank(raw.url.as_deref()) => {
                return Err(missing("url"))
            }
            TransportKind::Stdio | TransportKind::StreamableHttp | TransportKind::Sse => {}
        }
        let field = |name: &str| child_path(node, name);
        // Keys of the other kind of transport would be silently ignored: refuse them instead.
        let present: [(&str, bool); 7] = [
            ("command", raw.command.is_some()),
            ("args", raw.args.is_some()),
            ("env", raw.env.is_some()),
            ("cwd", raw.cwd.is_some()),
            ("url", raw.url.is_some()),
            ("headers", raw.headers.is_some()),
            ("bearer_token", raw.bearer_token.is_some()),
        ];
        for (key, is_set) in present {
            let http_only = matches!(key, "url" | "headers" | "bearer_token");
            if is_set && http_only != transport.is_http() {
                let at = self
                    .spans
                    .key(&field(key))
                    .unwrap_or_else(|| self.value_at(&field(key)));
                let belongs = if http_only {
                    "streamable_http and sse servers"
                } else {
                    "stdio servers"
                };
                return Err(ConfigError::at(
                    ConfigErrorKind::Invalid,
                    self.path,
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
            value.map(|v| self.expand(&field(name), &v)).transpose()
        };
        let command = opt("command", raw.command)?;
        let url = opt("url", raw.url)?;
        let cwd = opt("cwd", raw.cwd)?.map(|dir| relative_to(base, Path::new(&dir)));
        let args = raw
            .args
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(j, arg)| self.expand(&index_path(&field("args"), j), arg))
            .collect::<Result<Vec<_>, _>>()?;
        let env = self.map(&field("env"), raw.env.unwrap_or_default())?;
        if let Some(url) = &url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(self.error(
                    ConfigErrorKind::Invalid,
                    &field("url"),
                    format!("url {url:?} must start with http:// or https://"),
                ));
            }
        }
        let headers = self.map(&field("headers"), raw.headers.unwrap_or_default())?;
        for (name, value) in &headers {
            let node = child_path(&field("headers"), name);
            if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(ConfigError::at(
                    ConfigErrorKind::Invalid,
                    self.path,
                    self.spans
                        .key(&node)
                        .unwrap_or_else(|| self.value_at(&node)),
                    format!("invalid header name {name:?}"),
                ));
            }
            if http::HeaderValue::from_str(value).is_err() {
                // The value itself may be a secret: name the header, never the value.
                return Err(self.error(
                    ConfigErrorKind::Invalid,
                    &node,
                    format!("the value of header {name} is not a valid header value (control characters or non-ASCII)"),
                ));
            }
        }
        let bearer_token = opt("bearer_token", raw.bearer_token)?;
        if let Some(token) = &bearer_token {
            if token.trim().is_empty()
                || http::HeaderValue::from_str(&format!("Bearer {token}")).is_err()
            {
                return Err(self.error(
                    ConfigErrorKind::Invalid,
                    &field("bearer_token"),
                    "bearer_token is empty or not a valid header value (control characters or non-ASCII)".to_string(),
                ));
            }
        }
        let request_timeout = match &raw.request_timeout {
            Some(d) => self.duration(&field("request_timeout"), d)?,
            None => DEFAULT_REQUEST_TIMEOUT,
        };
        Ok(ServerConfig {
            name: raw.name,
            transport,
            command,
            args,
            env,
            cwd,
            url,
            headers,
            bearer_token,
            request_timeout,
            annotation_trust: raw.annotation_trust.unwrap_or_default(),
            restart: raw.restart.unwrap_or_default(),
            enabled: raw.enabled.unwrap_or(true),
            roots: raw
                .roots
                .map(|list| {
                    list.iter()
                        .enumerate()
                        .map(|(i, root)| self.root(&index_path(&field("roots"), i), root, base))
                        .collect::<Result<Vec<_>, _>>()
                })
                .transpose()?,
        })
    }

    /// Expand the values (not the keys) of a string map.
    pub(super) fn map(
        &self,
        node: &str,
        raw: BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, ConfigError> {
        raw.into_iter()
            .map(|(k, v)| {
                let value = self.expand(&child_path(node, &k), &v)?;
                Ok((k, value))
            })
            .collect()
    }
}

// No Debug on the raw types: they hold headers and tokens before redaction.
#[derive(Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `mcp`, `policy`, `notifications` and `agent` sections"
)]
struct RawConfig {
    #[serde(default)]
    mcp: Option<RawMcp>,
    #[serde(default)]
    policy: Option<RawPolicy>,
    #[serde(default)]
    notifications: Option<RawNotifications>,
    #[serde(default)]
    agent: Option<RawAgent>,
}

#[derive(Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `servers`, `startup_budget`, `max_concurrent_starts` and `roots`"
)]
struct RawMcp {
    #[serde(default)]
    startup_budget: Option<DurationText>,
    #[serde(default)]
    max_concurrent_starts: Option<u64>,
    #[serde(default)]
    roots: Option<Vec<String>>,
    #[serde(default)]
    servers: Option<Vec<RawServer>>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a server mapping (name, transport, command, url, …)"
)]
struct RawServer {
    name: String,
    #[serde(default)]
    transport: Option<TransportKind>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Option<Vec<String>>,
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
    #[serde(default)]
    bearer_token: Option<String>,
    #[serde(default)]
    request_timeout: Option<DurationText>,
    #[serde(default)]
    annotation_trust: Option<AnnotationTrust>,
    #[serde(default)]
    restart: Option<RestartPolicy>,
    #[serde(default)]
    enabled: Option<bool>,
    #[serde(default)]
    roots: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `side_effect_ceiling` and `approval`"
)]
struct RawPolicy {
    #[serde(default)]
    side_effect_ceiling: Option<SideEffectCeiling>,
    #[serde(default)]
    approval: Option<ApprovalPolicy>,
}

/// A duration as written (`10s`, or a bare number of seconds), parsed after deserialization so
/// the error can say which key it is.
#[derive(Debug, Clone)]
pub(super) struct DurationText(String);

impl<'de> Deserialize<'de> for DurationText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = DurationText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration such as 500ms, 10s, 2m or 1h")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<DurationText, E> {
                Ok(DurationText(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<DurationText, E> {
                Ok(DurationText(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DurationText, E> {
                Ok(DurationText(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<DurationText, E> {
                Ok(DurationText(v.to_string()))
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
