//! `telemetry:`: where traces and metrics go over OTLP/HTTP, with which headers, and whether
//! calls' arguments and results go with them. Nothing is sent while `otlp_endpoint` is unset.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::agent_load::{has_userinfo, reqwest_url_invalid};
use super::context::Context;
use super::error::ConfigErrorKind;
use super::redact::RedactedMap;

/// The `telemetry:` section. Its Debug output redacts header values under secret names.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct TelemetryConfig {
    /// `otlp_endpoint`: the collector's OTLP/HTTP base URL (`http://localhost:4318`); traces go
    /// to `…/v1/traces`, metrics to `…/v1/metrics`. `None`: nothing is sent.
    pub otlp_endpoint: Option<String>,
    /// `headers`: sent with every export (a collector's `Authorization`, a tenant header).
    pub headers: BTreeMap<String, String>,
    /// `include_payloads`: a call's span also carries its arguments and result text (secrets
    /// of the config scrubbed). Off by default.
    pub include_payloads: bool,
}

impl std::fmt::Debug for TelemetryConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetryConfig")
            .field("otlp_endpoint", &self.otlp_endpoint)
            .field("headers", &RedactedMap(&self.headers))
            .field("include_payloads", &self.include_payloads)
            .finish()
    }
}

/// The raw `telemetry:` section.
#[derive(Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `otlp_endpoint`, `headers` and `include_payloads`"
)]
pub(super) struct RawTelemetry {
    #[serde(default)]
    otlp_endpoint: Option<String>,
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
    #[serde(default)]
    include_payloads: Option<bool>,
}

/// The `telemetry:` section, checked (each mistake recorded at its place).
pub(super) fn telemetry(cx: &Context, raw: Option<RawTelemetry>) -> TelemetryConfig {
    let raw = raw.unwrap_or_default();
    let node = "telemetry.otlp_endpoint";
    let otlp_endpoint = raw
        .otlp_endpoint
        .and_then(|url| cx.keep(cx.expand(node, &url)))
        .filter(|url| !url.trim().is_empty());
    if let Some(url) = &otlp_endpoint {
        if has_userinfo(url) {
            // Not quoted: the URL holds a secret.
            cx.report(cx.error(
                ConfigErrorKind::Invalid,
                node,
                format!("{node}: a user name or password in the URL would be shown in errors: give them as a header under telemetry.headers"),
            ));
        } else if !(url.starts_with("http://") || url.starts_with("https://"))
            || reqwest_url_invalid(url)
        {
            cx.report(cx.error(
                ConfigErrorKind::Invalid,
                node,
                format!("{node}: {url:?} must be an http:// or https:// URL (the collector's OTLP/HTTP address, e.g. http://localhost:4318)"),
            ));
        }
    }
    TelemetryConfig {
        otlp_endpoint,
        headers: cx.headers("telemetry.headers", raw.headers.unwrap_or_default()),
        include_payloads: raw.include_payloads.unwrap_or(false),
    }
}
