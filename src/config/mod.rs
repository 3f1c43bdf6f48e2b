//! Configuration: the YAML schema, its defaults, and loading with `file:line:col` errors.
//!
//! This is the lowest layer: plain data that every other layer reads. Loading, validation and
//! `${VAR}` expansion live in `load.rs` (the shape check in `schema.rs`, the text as written in
//! `raw.rs`, syntax errors in `syntax.rs`, what every section's value checks share in
//! `context.rs`); the location index that gives every node its line and
//! column lives in `spans.rs` (serde_yaml exposes no spans). Writing back: `edit/` (the
//! comment-preserving editor), `write.rs` (the file); `import/` reads other clients' configs.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

mod agent;
mod agent_load;
mod context;
mod daemon;
mod duration;
pub mod edit;
mod emit;
mod error;
mod expand;
mod gateway;
mod hooks;
pub mod import;
mod load;
mod oauth;
mod path;
mod raw;
pub mod redact;
mod rewake;
mod rules;
mod sandbox;
mod schema;
pub mod spans;
mod syntax;
mod telemetry;
mod values;
mod write;

pub use agent::{
    AgentConfig, ModelEndpoint, ModelProfile, ModelProvider, ToolSearch, DEFAULT_MAX_RESULT_TOKENS,
    DEFAULT_MAX_TURNS, DEFAULT_MODEL_TIMEOUT, DEFAULT_SYSTEM_PROMPT,
};
pub use daemon::DaemonConfig;
pub use duration::parse_duration;
pub use error::MAX_ERRORS;
pub use error::{ConfigError, ConfigErrorKind, ErrorPlace};
pub use expand::ExpandError;
pub use gateway::{GatewayConfig, Naming, Unattended, DEFAULT_MAX_CALLS_PER_HOST};
pub use hooks::{HookAction, HookConfig, HookEvent, DEFAULT_HOOK_TIMEOUT};
pub use load::{file_uri, load, load_str, DEFAULT_REQUEST_TIMEOUT};
pub use oauth::{Assertion, IdpConfig, OAuthConfig, OAuthGrant, PrivateKey, SigningAlgorithm};
pub use path::{resolve_path, state_home, LOCAL_CONFIG_NAME};
pub use rules::{add_rule, is_pin, remove_rule, ApprovalRule, RuleDecision, ToolPattern, RULES};
pub use sandbox::SandboxConfig;
pub use spans::{NodeSpan, Position, Spans};
pub use telemetry::TelemetryConfig;
pub use values::{is_valid_server_name, SERVER_NAME_RULE};
pub use write::{
    digest, set_server_enabled, set_server_trust, write_private, ConfigFile, TrustWriteError,
    WriteError, SERVERS,
};

/// The whole configuration file, validated and with `${VAR}` expanded.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Where the config was read from (absolute).
    pub path: PathBuf,
    pub mcp: McpConfig,
    pub policy: PolicyConfig,
    /// The `notifications:` section (rewake rules).
    pub notifications: NotificationsConfig,
    /// The `hooks:` section, in order.
    pub hooks: Vec<HookConfig>,
    /// The `agent:` section: the model endpoints the agent may use (`None`: no agent).
    pub agent: Option<AgentConfig>,
    /// The `gateway:` section: how calls from other hosts (`serve`) are treated.
    pub gateway: GatewayConfig,
    /// The `telemetry:` section: where traces and metrics go (nowhere unless it says).
    pub telemetry: TelemetryConfig,
    /// The `daemon:` section: where the daemon also listens over TCP with TLS.
    pub daemon: DaemonConfig,
    /// A digest of the text it was loaded from: a write-back refuses to touch a file whose
    /// digest changed since (someone else edited it).
    pub source_digest: u64,
}

/// The `mcp:` section.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McpConfig {
    pub servers: Vec<ServerConfig>,
    /// Optional operator cap on the start-up deadline (`mcp.startup_budget`).
    pub startup_budget: Option<Duration>,
    /// At most this many servers start at once (`mcp.max_concurrent_starts`); the others
    /// wait in a queue. `None`: no limit.
    pub max_concurrent_starts: Option<usize>,
    /// What the console answers to a server's `roots/list`: `file://` URIs (`mcp.roots`;
    /// default, the config file's folder).
    pub roots: Vec<String>,
}

/// One entry of `mcp.servers`. Its Debug output redacts secrets (`bearer_token`, and header and
/// env values under secret names, see [`redact`]).
#[derive(Clone, PartialEq)]
pub struct ServerConfig {
    /// Matches `^[a-z0-9]([a-z0-9-]*[a-z0-9])?$` (checked at load).
    pub name: String,
    pub transport: TransportKind,
    /// stdio: the program to run (required for stdio).
    pub command: Option<String>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    /// streamable_http / sse: the endpoint (required for those).
    pub url: Option<String>,
    /// streamable_http / sse: sent with every request.
    pub headers: BTreeMap<String, String>,
    /// streamable_http / sse: sent as `Authorization: Bearer …`. A secret: shown redacted.
    pub bearer_token: Option<String>,
    /// streamable_http: how an OAuth token is obtained (`oauth:`). Without it, a server that
    /// answers 401 is still logged in to with dynamic registration. Its secrets are redacted.
    pub oauth: Option<OAuthConfig>,
    /// Deadline of every request to this server, the handshake included. Default 30 s.
    pub request_timeout: Duration,
    pub annotation_trust: AnnotationTrust,
    /// Whether the supervisor starts the server again after it went away by itself.
    pub restart: RestartPolicy,
    /// When the server is started: with the others at start-up, or (`lazy`) on its first call,
    /// its tools listed meanwhile from the cached list of its last run.
    pub start: StartMode,
    pub enabled: bool,
    /// This server's answer to `roots/list` (`file://` URIs), instead of `mcp.roots`.
    pub roots: Option<Vec<String>>,
    /// stdio: what the process may read, write and connect to (`sandbox:`); `None`: not
    /// sandboxed.
    pub sandbox: Option<SandboxConfig>,
}

impl Config {
    /// A config not read from any file (embedders, tests, benches): `servers` under `policy`,
    /// no roots.
    pub fn from_servers(servers: Vec<ServerConfig>, policy: PolicyConfig) -> Config {
        Config {
            path: PathBuf::from("/dev/null"),
            mcp: McpConfig {
                servers,
                startup_budget: None,
                max_concurrent_starts: None,
                roots: Vec::new(),
            },
            policy,
            notifications: NotificationsConfig::default(),
            hooks: Vec::new(),
            agent: None,
            gateway: GatewayConfig::default(),
            telemetry: TelemetryConfig::default(),
            daemon: DaemonConfig::default(),
            source_digest: 0,
        }
    }
}

impl ServerConfig {
    /// A stdio server running `command args…`, every other setting at its default.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>, args: Vec<String>) -> Self {
        ServerConfig {
            name: name.into(),
            transport: TransportKind::Stdio,
            command: Some(command.into()),
            args,
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            bearer_token: None,
            oauth: None,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            annotation_trust: AnnotationTrust::Ignore,
            restart: RestartPolicy::OnFailure,
            start: StartMode::Eager,
            enabled: true,
            roots: None,
            sandbox: None,
        }
    }
}

impl ServerConfig {
    /// A remote server (`streamable_http` or `sse`) at `url`, every other setting at its default.
    pub fn remote(
        name: impl Into<String>,
        transport: TransportKind,
        url: impl Into<String>,
    ) -> Self {
        let mut server = ServerConfig::stdio(name, "", Vec::new());
        server.transport = transport;
        server.command = None;
        server.url = Some(url.into());
        server
    }
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("name", &self.name)
            .field("transport", &self.transport)
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &redact::RedactedMap(&self.env))
            .field("cwd", &self.cwd)
            .field("url", &self.url)
            .field("headers", &redact::RedactedMap(&self.headers))
            .field(
                "bearer_token",
                &redact::RedactedSecret(self.bearer_token.as_deref()),
            )
            .field("oauth", &self.oauth)
            .field("request_timeout", &self.request_timeout)
            .field("annotation_trust", &self.annotation_trust)
            .field("restart", &self.restart)
            .field("start", &self.start)
            .field("enabled", &self.enabled)
            .field("roots", &self.roots)
            .finish()
    }
}

/// How a server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    Stdio,
    StreamableHttp,
    Sse,
}

impl TransportKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::Stdio => "stdio",
            TransportKind::StreamableHttp => "streamable_http",
            TransportKind::Sse => "sse",
        }
    }

    /// Whether the server is reached over HTTP (`streamable_http` or `sse`).
    pub fn is_http(self) -> bool {
        match self {
            TransportKind::Stdio => false,
            TransportKind::StreamableHttp | TransportKind::Sse => true,
        }
    }
}

/// How far a server's tool annotations are believed (docs/ARCHITECTURE.md §3). `Ignore` is the
/// default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnnotationTrust {
    #[default]
    Ignore,
    Trust,
}

impl AnnotationTrust {
    pub fn as_str(self) -> &'static str {
        match self {
            AnnotationTrust::Ignore => "ignore",
            AnnotationTrust::Trust => "trust",
        }
    }
}

/// What the supervisor does when a ready server goes away by itself (its process exits, its
/// connection is lost). The default for every transport is `OnFailure`: a local process that
/// crashed is started again, and a remote server is reconnected to once it answers again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestartPolicy {
    /// Leave it down until the operator restarts it.
    Never,
    /// Start it again with exponential backoff, until it crashes too often in a row.
    #[default]
    OnFailure,
}

impl RestartPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            RestartPolicy::Never => "never",
            RestartPolicy::OnFailure => "on_failure",
        }
    }
}

/// When a server is started (`start:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartMode {
    /// With every other server, at start-up.
    #[default]
    Eager,
    /// On its first call. Until then its tools are those of its last listing, kept on disk for
    /// as long as the server said they stay fresh (`ttlMs`); without such a list it starts at
    /// start-up like the others, and its listing is kept for next time.
    Lazy,
}

impl StartMode {
    pub fn as_str(self) -> &'static str {
        match self {
            StartMode::Eager => "eager",
            StartMode::Lazy => "lazy",
        }
    }
}

/// Which tools of aimon-console itself (not of any server) exist: `policy.local_tools`. By
/// default `read` alone: `bash` runs shell commands and is off unless listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LocalTools {
    /// `read`: reads files (read-only).
    pub read: bool,
    /// `bash`: runs shell commands (mutating, destructive).
    pub bash: bool,
}

impl Default for LocalTools {
    fn default() -> Self {
        LocalTools {
            read: true,
            bash: false,
        }
    }
}

impl LocalTools {
    /// No local tools (`local_tools: []`).
    pub const NONE: LocalTools = LocalTools {
        read: false,
        bash: false,
    };

    /// Every local tool.
    pub const ALL: LocalTools = LocalTools {
        read: true,
        bash: true,
    };

    /// Whether the local tool called `name` is on.
    pub fn contains(self, name: &str) -> bool {
        match name {
            "read" => self.read,
            "bash" => self.bash,
            _ => false,
        }
    }

    /// The names of the tools that are on.
    pub fn names(self) -> Vec<&'static str> {
        [("read", self.read), ("bash", self.bash)]
            .into_iter()
            .filter_map(|(name, on)| on.then_some(name))
            .collect()
    }
}

/// The `notifications:` section.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NotificationsConfig {
    /// `notifications.rewake`: server notifications that become external events, in order.
    pub rewake: Vec<RewakeRule>,
}

/// One `notifications.rewake` rule (seed §7.2): a notification from `server` with `method`
/// whose params match every entry of `matches` becomes the external event `event`.
#[derive(Debug, Clone, PartialEq)]
pub struct RewakeRule {
    /// A configured server's name (checked at load).
    pub server: String,
    /// The JSON-RPC method, exactly (`notifications/message`).
    pub method: String,
    /// Dotted paths into the notification's `params` (`data.title`; a number indexes an
    /// array) and the JSON value each must equal. Empty: every notification of that method.
    pub matches: BTreeMap<String, serde_json::Value>,
    /// The name of the external event it becomes.
    pub event: String,
}

/// The `policy:` section: what may run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PolicyConfig {
    pub side_effect_ceiling: SideEffectCeiling,
    pub approval: ApprovalPolicy,
    /// Which local tools exist at all (`policy.local_tools`).
    pub local_tools: LocalTools,
    /// `policy.rules`, in order: the first that matches a call decides.
    pub rules: Vec<ApprovalRule>,
    /// What a tool whose texts are flagged (`tool/poison.rs`) gets: a question, or a refusal.
    pub flagged: FlaggedPolicy,
    /// The local `bash` tool's sandbox (`policy.bash_sandbox`; by default it writes only under
    /// the working directory).
    pub bash_sandbox: SandboxConfig,
}

/// `policy.flagged`: a tool whose description or schema hides something or speaks to the model
/// behind the operator's back is asked about (even when read-only, even where a rule or a hook
/// would let it run), or refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlaggedPolicy {
    #[default]
    Ask,
    Deny,
}

/// The highest side-effect level any call may have; above it a call is refused without a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SideEffectCeiling {
    ReadOnly,
    #[default]
    Mutating,
}

impl SideEffectCeiling {
    pub fn as_str(self) -> &'static str {
        match self {
            SideEffectCeiling::ReadOnly => "read_only",
            SideEffectCeiling::Mutating => "mutating",
        }
    }
}

/// Which calls wait for the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// Mutating calls ask; read-only calls run.
    #[default]
    AskMutating,
    /// Every call asks.
    AskAll,
    /// Nothing asks (the ceiling still holds).
    Never,
}

impl ApprovalPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::AskMutating => "ask_mutating",
            ApprovalPolicy::AskAll => "ask_all",
            ApprovalPolicy::Never => "never",
        }
    }
}
