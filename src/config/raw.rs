//! The config as written, before validation: what serde decodes the text into. `load.rs`
//! checks and expands it into [`Config`](super::Config).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use super::agent_load::RawAgent;
use super::rewake::RawNotifications;
use super::{AnnotationTrust, ApprovalPolicy, RestartPolicy, SideEffectCeiling, TransportKind};

// No Debug on the raw types: they hold headers and tokens before redaction.
#[derive(Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `mcp`, `policy`, `notifications` and `agent` sections"
)]
pub(super) struct RawConfig {
    #[serde(default)]
    pub(super) mcp: Option<RawMcp>,
    #[serde(default)]
    pub(super) policy: Option<RawPolicy>,
    #[serde(default)]
    pub(super) notifications: Option<RawNotifications>,
    #[serde(default)]
    pub(super) agent: Option<RawAgent>,
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
    pub(super) enabled: Option<bool>,
    #[serde(default)]
    pub(super) roots: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `side_effect_ceiling`, `approval` and `local_tools`"
)]
pub(super) struct RawPolicy {
    #[serde(default)]
    pub(super) side_effect_ceiling: Option<SideEffectCeiling>,
    #[serde(default)]
    pub(super) approval: Option<ApprovalPolicy>,
    #[serde(default)]
    pub(super) local_tools: Option<Vec<LocalTool>>,
}

/// One entry of `policy.local_tools` as written.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum LocalTool {
    Read,
    Bash,
}

/// A duration as written (`10s`, or a bare number of seconds), parsed after deserialization so
/// the error can say which key it is.
#[derive(Debug)]
pub(super) struct DurationText(pub(super) String);

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
