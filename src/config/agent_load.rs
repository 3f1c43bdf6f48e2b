//! Loading the `agent:` section: the raw keys as written, settings shared from beside `models`,
//! and every check located `file:line:col` like the rest of the config.
//!
//! Apart from `agent.rs` (the types the other layers read) because these rules concern only
//! the file: what may be written where, and how shared settings merge into each profile.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::agent::{
    AgentConfig, ModelEndpoint, ModelProfile, ModelProvider, ToolSearch, DEFAULT_MAX_RESULT_TOKENS,
    DEFAULT_MAX_TURNS, DEFAULT_MODEL_TIMEOUT, DEFAULT_SYSTEM_PROMPT,
};
use super::context::Context;
use super::error::ConfigErrorKind;
use super::spans::{child_path, index_path};
use super::values::{is_blank, is_valid_server_name, relative_to, DurationText};

/// The `agent:` section as written: the keys of one profile (shared by every profile when
/// `models` is given), `models` and `default`. No Debug: it holds the key before redaction.
#[derive(Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `models` and `default`, or the keys of one model profile"
)]
pub(super) struct RawAgent {
    #[serde(default)]
    default: Option<String>,
    #[serde(default)]
    models: Option<BTreeMap<String, RawProfile>>,
    #[serde(default)]
    base_url: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Option<Vec<String>>,
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    api_key: Option<String>,
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
    #[serde(default)]
    system_prompt: Option<String>,
    #[serde(default)]
    max_turns: Option<u64>,
    #[serde(default)]
    request_timeout: Option<DurationText>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    temperature: Option<f64>,
    #[serde(default)]
    max_tokens: Option<u64>,
    #[serde(default)]
    context_window: Option<u64>,
    #[serde(default)]
    max_result_tokens: Option<u64>,
    #[serde(default)]
    tool_search: Option<String>,
}

/// One entry of `agent.models` as written.
#[derive(Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a model profile mapping (base_url or command, model, api_key, …)"
)]
pub(super) struct RawProfile {
    #[serde(default)]
    base_url: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Option<Vec<String>>,
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    api_key: Option<String>,
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
    #[serde(default)]
    system_prompt: Option<String>,
    #[serde(default)]
    max_turns: Option<u64>,
    #[serde(default)]
    request_timeout: Option<DurationText>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    temperature: Option<f64>,
    #[serde(default)]
    max_tokens: Option<u64>,
    #[serde(default)]
    context_window: Option<u64>,
    #[serde(default)]
    max_result_tokens: Option<u64>,
    #[serde(default)]
    tool_search: Option<String>,
}

/// A profile's settings checked and expanded, each still optional (to merge shared ones in).
#[derive(Default, Clone)]
struct Settings {
    model: Option<String>,
    provider: Option<ModelProvider>,
    api_key: Option<String>,
    headers: Option<BTreeMap<String, String>>,
    system_prompt: Option<String>,
    max_turns: Option<u32>,
    request_timeout: Option<Duration>,
    stream: Option<bool>,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    context_window: Option<u32>,
    max_result_tokens: Option<u32>,
    tool_search: Option<ToolSearch>,
}

impl Settings {
    /// `self`, with what it leaves unset taken from `shared`.
    fn over(self, shared: &Settings) -> Settings {
        Settings {
            model: self.model.or_else(|| shared.model.clone()),
            provider: self.provider.or(shared.provider),
            api_key: self.api_key.or_else(|| shared.api_key.clone()),
            headers: self.headers.or_else(|| shared.headers.clone()),
            system_prompt: self.system_prompt.or_else(|| shared.system_prompt.clone()),
            max_turns: self.max_turns.or(shared.max_turns),
            request_timeout: self.request_timeout.or(shared.request_timeout),
            stream: self.stream.or(shared.stream),
            temperature: self.temperature.or(shared.temperature),
            max_tokens: self.max_tokens.or(shared.max_tokens),
            context_window: self.context_window.or(shared.context_window),
            max_result_tokens: self.max_result_tokens.or(shared.max_result_tokens),
            tool_search: self.tool_search.or(shared.tool_search),
        }
    }
}

/// The endpoint keys as written.
struct RawEndpoint {
    base_url: Option<String>,
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<BTreeMap<String, String>>,
    cwd: Option<String>,
}

impl RawEndpoint {
    /// The endpoint keys present, by name.
    fn present(&self) -> Vec<&'static str> {
        [
            ("base_url", self.base_url.is_some()),
            ("command", self.command.is_some()),
            ("args", self.args.is_some()),
            ("env", self.env.is_some()),
            ("cwd", self.cwd.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, set)| set.then_some(key))
        .collect()
    }
}

/// The raw settings keys of a profile (or of the shared top level).
struct RawSettings {
    model: Option<String>,
    provider: Option<String>,
    api_key: Option<String>,
    headers: Option<BTreeMap<String, String>>,
    system_prompt: Option<String>,
    max_turns: Option<u64>,
    request_timeout: Option<DurationText>,
    stream: Option<bool>,
    temperature: Option<f64>,
    max_tokens: Option<u64>,
    context_window: Option<u64>,
    max_result_tokens: Option<u64>,
    tool_search: Option<String>,
}

impl RawProfile {
    fn split(self) -> (RawEndpoint, RawSettings) {
        (
            RawEndpoint {
                base_url: self.base_url,
                command: self.command,
                args: self.args,
                env: self.env,
                cwd: self.cwd,
            },
            RawSettings {
                model: self.model,
                provider: self.provider,
                api_key: self.api_key,
                headers: self.headers,
                system_prompt: self.system_prompt,
                max_turns: self.max_turns,
                request_timeout: self.request_timeout,
                stream: self.stream,
                temperature: self.temperature,
                max_tokens: self.max_tokens,
                context_window: self.context_window,
                max_result_tokens: self.max_result_tokens,
                tool_search: self.tool_search,
            },
        )
    }
}

/// Checks the `agent:` section: every profile has exactly one endpoint and a model, values are
/// in range, `${VAR}`s expand, and `default` names a profile. Every mistake is reported, the
/// section goes on being checked after one; `None` when there was any. `section` is the section
/// as parsed (`agent:` with nothing under it decodes as no section at all).
pub(super) fn agent_config(
    cx: &Context<'_>,
    section: &serde_yaml::Value,
    raw: RawAgent,
    base: &Path,
) -> Option<AgentConfig> {
    let before = cx.error_count();
    if section.is_null() || section.as_mapping().is_some_and(|m| m.is_empty()) {
        cx.report(cx.key_error("agent",
            "agent: the section is empty: give one profile (`base_url` or `command`, and `model`) or named profiles under `models` (leave `agent:` out for no agent)".to_string(),
        ));
        return None;
    }
    let top = RawProfile {
        base_url: raw.base_url,
        command: raw.command,
        args: raw.args,
        env: raw.env,
        cwd: raw.cwd,
        model: raw.model,
        provider: raw.provider,
        api_key: raw.api_key,
        headers: raw.headers,
        system_prompt: raw.system_prompt,
        max_turns: raw.max_turns,
        request_timeout: raw.request_timeout,
        stream: raw.stream,
        temperature: raw.temperature,
        max_tokens: raw.max_tokens,
        context_window: raw.context_window,
        max_result_tokens: raw.max_result_tokens,
        tool_search: raw.tool_search,
    };
    let (top_endpoint, top_settings) = top.split();
    let shared = settings(cx, "agent", top_settings);
    let mut profiles = BTreeMap::new();
    let default = match raw.models {
        None => {
            if let Some(default) = raw.default.as_ref().filter(|d| *d != "default") {
                cx.report(cx.error(
                    ConfigErrorKind::Invalid,
                    "agent.default",
                    format!("agent.default names {default:?}, but there is no agent.models: an inline agent is the one profile \"default\""),
                ));
            }
            if let Some(profile) = finish(cx, "agent", "default", top_endpoint, shared, base) {
                profiles.insert("default".to_string(), profile);
            }
            "default".to_string()
        }
        Some(models) => {
            for key in top_endpoint.present() {
                cx.report(cx.key_error(&child_path("agent", key),
                    format!("agent.{key}: with agent.models, each profile names its own endpoint (base_url or command); only shared settings go beside models"),
                ));
            }
            if models.is_empty() {
                cx.report(cx.error(
                    ConfigErrorKind::Invalid,
                    "agent.models",
                    "agent.models is empty: give at least one profile".to_string(),
                ));
            }
            // Every name written, valid or not: `default` is checked against what the file says.
            let names: Vec<String> = models.keys().cloned().collect();
            for (name, raw_profile) in models {
                let node = child_path("agent.models", &name);
                if !is_valid_server_name(&name) {
                    cx.report(cx.key_error(&node,
                        format!("invalid model profile name {name:?}: a name must match ^[a-z0-9]([a-z0-9-]*[a-z0-9])?$ (lowercase letters, digits and inner hyphens)"),
                    ));
                }
                let (endpoint, own) = raw_profile.split();
                let own = settings(cx, &node, own);
                if let Some(profile) = finish(cx, &node, &name, endpoint, own.over(&shared), base) {
                    profiles.insert(name, profile);
                }
            }
            match (raw.default, names.as_slice()) {
                (Some(default), _) if names.contains(&default) => default,
                (Some(default), _) => {
                    cx.report(cx.error(
                        ConfigErrorKind::Invalid,
                        "agent.default",
                        format!(
                            "agent.default: no profile named {default:?} in agent.models (there are: {})",
                            names.join(", ")
                        ),
                    ));
                    default
                }
                (None, [only]) => only.clone(),
                // No profile at all: reported above.
                (None, []) => String::new(),
                (None, [_, _, ..]) => {
                    cx.report(
                        cx.key_error(
                            "agent.models",
                            "agent.default is required when agent.models has more than one profile"
                                .to_string(),
                        ),
                    );
                    String::new()
                }
            }
        }
    };
    (cx.error_count() == before).then_some(AgentConfig { default, profiles })
}

/// Checks and expands the settings keys written at `node`, reporting every mistake. A value with
/// a mistake is kept as written: the profile is whole anyway (no "no `model`" on top of "model
/// must not be empty"), and the errors keep it from being used.
fn settings(cx: &Context<'_>, node: &str, raw: RawSettings) -> Settings {
    let field = |name: &str| child_path(node, name);
    let text =
        |name: &str, value: String| cx.keep(cx.expand(&field(name), &value)).unwrap_or(value);
    let invalid = |name: &str, message: String| {
        cx.report(cx.error(ConfigErrorKind::Invalid, &field(name), message));
    };
    let model = raw.model.map(|m| text("model", m));
    if model.as_deref().is_some_and(|m| m.trim().is_empty()) {
        invalid("model", format!("{} must not be empty", field("model")));
    }
    let provider = raw.provider.and_then(|p| match ModelProvider::named(&p) {
        Some(provider) => Some(provider),
        None => {
            invalid(
                "provider",
                format!(
                    "{}: unknown provider {p:?}, expected one of {}",
                    field("provider"),
                    ModelProvider::NAMES.join(", ")
                ),
            );
            None
        }
    });
    let api_key = raw.api_key.map(|k| text("api_key", k));
    if let Some(key) = &api_key {
        if key.trim().is_empty() || http::HeaderValue::from_str(&format!("Bearer {key}")).is_err() {
            // Never the value: it is a secret.
            invalid(
                "api_key",
                format!(
                    "{} is empty or not a valid header value (control characters or non-ASCII)",
                    field("api_key")
                ),
            );
        }
    }
    let headers = raw.headers.map(|h| cx.headers(&field("headers"), h));
    let system_prompt = raw.system_prompt.map(|p| text("system_prompt", p));
    let request_timeout = raw
        .request_timeout
        .as_ref()
        .and_then(|d| cx.keep(cx.duration(&field("request_timeout"), d)));
    if request_timeout.is_some_and(|d| d.is_zero()) {
        invalid(
            "request_timeout",
            format!("{} must be more than 0", field("request_timeout")),
        );
    }
    if let Some(t) = raw.temperature {
        if !(0.0..=2.0).contains(&t) {
            invalid(
                "temperature",
                format!("{} must be between 0 and 2, not {t}", field("temperature")),
            );
        }
    }
    Settings {
        model,
        provider,
        api_key,
        headers,
        system_prompt,
        max_turns: raw
            .max_turns
            .and_then(|n| count(cx, &field("max_turns"), n)),
        request_timeout,
        stream: raw.stream,
        temperature: raw.temperature,
        max_tokens: raw
            .max_tokens
            .and_then(|n| count(cx, &field("max_tokens"), n)),
        context_window: raw
            .context_window
            .and_then(|n| count(cx, &field("context_window"), n)),
        max_result_tokens: raw
            .max_result_tokens
            .and_then(|n| count(cx, &field("max_result_tokens"), n)),
        tool_search: raw.tool_search.and_then(|t| match ToolSearch::parse(&t) {
            Some(search) => Some(search),
            None => {
                invalid(
                    "tool_search",
                    format!(
                        "{}: {t:?} is not off, always, auto or auto:N% (N from 1 to 100)",
                        field("tool_search")
                    ),
                );
                None
            }
        }),
    }
}

/// A count that must be at least 1 and fit 32 bits.
fn count(cx: &Context<'_>, node: &str, n: u64) -> Option<u32> {
    let problem = match u32::try_from(n) {
        Ok(0) => "must be at least 1".to_string(),
        Ok(n) => return Some(n),
        Err(_) => format!("must be at most {}", u32::MAX),
    };
    cx.report(cx.error(ConfigErrorKind::Invalid, node, format!("{node} {problem}")));
    None
}

/// The profile at `node` from its endpoint keys and its (merged) settings; `None` when it has
/// mistakes (each reported).
fn finish(
    cx: &Context<'_>,
    node: &str,
    name: &str,
    raw: RawEndpoint,
    settings: Settings,
    base: &Path,
) -> Option<ModelProfile> {
    let before = cx.error_count();
    let field = |key: &str| child_path(node, key);
    let endpoint = match (&raw.base_url, &raw.command) {
        (Some(_), Some(_)) => {
            cx.report(cx.key_error(
                &field("command"),
                format!("{node}: give base_url or command, not both"),
            ));
            None
        }
        (None, None) => {
            cx.report(cx.key_error(node, format!(
                "{node}: no endpoint: give base_url (a running endpoint, e.g. http://127.0.0.1:8080/v1) or command (a program the console starts)"
            )));
            None
        }
        (Some(url), None) => {
            for key in ["args", "env", "cwd"] {
                if raw.present().contains(&key) {
                    cx.report(cx.key_error(
                        &field(key),
                        format!("{node}: `{key}` goes with command, not base_url"),
                    ));
                }
            }
            let url = cx.keep(cx.expand(&field("base_url"), url))?;
            if has_userinfo(&url) {
                // Not quoted: the URL holds a secret.
                cx.report(cx.error(
                    ConfigErrorKind::Invalid,
                    &field("base_url"),
                    format!(
                        "{}: a user name or password in the URL is not sent (and would be shown in errors): give the key as api_key, or a header under headers",
                        field("base_url")
                    ),
                ));
            } else if !(url.starts_with("http://") || url.starts_with("https://"))
                || reqwest_url_invalid(&url)
            {
                cx.report(cx.error(
                    ConfigErrorKind::Invalid,
                    &field("base_url"),
                    format!(
                        "{}: {url:?} must be an http:// or https:// URL",
                        field("base_url")
                    ),
                ));
            }
            Some(ModelEndpoint::Url(url))
        }
        (None, Some(command)) => {
            if is_blank(Some(command)) {
                cx.report(cx.error(
                    ConfigErrorKind::Invalid,
                    &field("command"),
                    format!("{} must not be empty", field("command")),
                ));
            }
            let command = cx.keep(cx.expand(&field("command"), command));
            let args: Vec<String> = raw
                .args
                .unwrap_or_default()
                .iter()
                .enumerate()
                .filter_map(|(i, arg)| cx.keep(cx.expand(&index_path(&field("args"), i), arg)))
                .collect();
            let env = cx.map(&field("env"), raw.env.unwrap_or_default());
            let cwd = raw
                .cwd
                .and_then(|dir| cx.keep(cx.expand(&field("cwd"), &dir)))
                .map(|dir| relative_to(base, Path::new(&dir)));
            command.map(|command| ModelEndpoint::Command {
                command,
                args,
                env,
                cwd,
            })
        }
    };
    if settings.model.is_none() {
        cx.report(cx.key_error(
            node,
            format!("{node}: no `model` (the model name the endpoint expects)"),
        ));
    }
    if cx.error_count() > before {
        return None;
    }
    Some(ModelProfile {
        name: name.to_string(),
        endpoint: endpoint?,
        model: settings.model?,
        provider: settings.provider.unwrap_or_default(),
        api_key: settings.api_key,
        headers: settings.headers.unwrap_or_default(),
        system_prompt: settings
            .system_prompt
            .unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_string()),
        max_turns: settings.max_turns.unwrap_or(DEFAULT_MAX_TURNS),
        request_timeout: settings.request_timeout.unwrap_or(DEFAULT_MODEL_TIMEOUT),
        stream: settings.stream.unwrap_or(true),
        temperature: settings.temperature,
        max_tokens: settings.max_tokens,
        context_window: settings.context_window,
        max_result_tokens: settings
            .max_result_tokens
            .unwrap_or(DEFAULT_MAX_RESULT_TOKENS),
        tool_search: settings.tool_search.unwrap_or_default(),
    })
}

/// `http://user:pass@host/…`: credentials in the authority.
pub(super) fn has_userinfo(url: &str) -> bool {
    split_userinfo(url).is_some()
}

/// A URL with credentials in its authority, in three: what comes before them (`http://`), the
/// credentials (`user:pass`), and what comes after the `@` (`host/…`).
pub(super) fn split_userinfo(url: &str) -> Option<(&str, &str, &str)> {
    let start = url.find("://").map_or(0, |at| at + 3);
    let rest = &url[start..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let at = authority.rfind('@')?;
    Some((&url[..start], &authority[..at], &rest[at + 1..]))
}

/// Whether `url` is not a URL at all (no host, spaces).
pub(super) fn reqwest_url_invalid(url: &str) -> bool {
    http::Uri::try_from(url).map_or(true, |uri| uri.host().is_none_or(str::is_empty))
}
