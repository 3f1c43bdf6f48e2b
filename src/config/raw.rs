//! The config as written, before validation: what serde decodes the text into. `load.rs`
//! checks and expands it into [`Config`](super::Config).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::agent_load::RawAgent;
use super::hooks::RawHook;
use super::rewake::RawNotifications;
use super::rules::RawRule;
use super::values::DurationText;
use super::{
    AnnotationTrust, ApprovalPolicy, FlaggedPolicy, RestartPolicy, SideEffectCeiling, StartMode,
    TransportKind,
};

// No Debug on the raw types: they hold headers and tokens before redaction.
#[derive(Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `mcp`, `policy`, `notifications`, `hooks`, `agent`, `gateway`, `telemetry` and `daemon` sections"
)]
pub(super) struct RawConfig {
    #[serde(default)]
    pub(super) mcp: Option<RawMcp>,
    #[serde(default)]
    pub(super) policy: Option<RawPolicy>,
    #[serde(default)]
    pub(super) notifications: Option<RawNotifications>,
    #[serde(default)]
    pub(super) hooks: Option<Vec<RawHook>>,
    pub(super) agent: Option<RawAgent>,
    #[serde(default)]
    pub(super) gateway: Option<super::gateway::RawGateway>,
    #[serde(default)]
    pub(super) telemetry: Option<super::telemetry::RawTelemetry>,
    #[serde(default)]
    pub(super) daemon: Option<super::daemon::RawDaemon>,
}

#[derive(Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `servers`, `startup_budget`, `max_concurrent_starts` and `roots`"
)]
pub(super) struct RawMcp {
    #[serde(default)]
    pub(super) startup_budget: Option<DurationText>,
    #[serde(default)]
    pub(super) max_concurrent_starts: Option<u64>,
    #[serde(default)]
    pub(super) roots: Option<Vec<String>>,
    #[serde(default)]
    pub(super) servers: Option<Vec<RawServer>>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a server mapping (name, transport, command, url, …)"
)]
pub(super) struct RawServer {
    pub(super) name: String,
    #[serde(default)]
    pub(super) transport: Option<TransportKind>,
    #[serde(default)]
    pub(super) command: Option<String>,
    #[serde(default)]
    pub(super) args: Option<Vec<String>>,
    #[serde(default)]
    pub(super) env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub(super) cwd: Option<String>,
    #[serde(default)]
    pub(super) url: Option<String>,
    #[serde(default)]
    pub(super) headers: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub(super) bearer_token: Option<String>,
    #[serde(default)]
    pub(super) oauth: Option<super::oauth::RawOAuth>,
    #[serde(default)]
    pub(super) request_timeout: Option<DurationText>,
    #[serde(default)]
    pub(super) annotation_trust: Option<AnnotationTrust>,
    #[serde(default)]
    pub(super) restart: Option<RestartPolicy>,
    #[serde(default)]
    pub(super) start: Option<StartMode>,
    #[serde(default)]
    pub(super) enabled: Option<bool>,
    #[serde(default)]
    pub(super) roots: Option<Vec<String>>,
    #[serde(default)]
    pub(super) sandbox: Option<super::sandbox::RawSandbox>,
}

#[derive(Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `side_effect_ceiling`, `approval`, `local_tools`, `rules`, `flagged` and `bash_sandbox`"
)]
pub(super) struct RawPolicy {
    #[serde(default)]
    pub(super) side_effect_ceiling: Option<SideEffectCeiling>,
    #[serde(default)]
    pub(super) approval: Option<ApprovalPolicy>,
    #[serde(default)]
    pub(super) local_tools: Option<Vec<LocalTool>>,
    #[serde(default)]
    pub(super) rules: Option<Vec<RawRule>>,
    #[serde(default)]
    pub(super) flagged: Option<FlaggedPolicy>,
    #[serde(default)]
    pub(super) bash_sandbox: Option<super::sandbox::RawSandbox>,
}

/// One entry of `policy.local_tools` as written.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum LocalTool {
    Read,
    Bash,
}
