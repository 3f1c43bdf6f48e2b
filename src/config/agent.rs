//! The `agent:` section: which model endpoints the agent may talk to (each speaking one of the
//! providers' APIs), as named profiles (`agent.models`, `agent.default`) or one profile written inline.
//!
//! Apart from `load.rs` because a profile has a secret of its own (`api_key`, redacted like
//! `bearer_token`) and rules of its own, which `agent_load.rs` checks (an endpoint is a URL or a
//! command the console starts, never both; settings written beside `models` are shared).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::redact;

/// `max_turns` when the config gives none: model turns per prompt.
pub const DEFAULT_MAX_TURNS: u32 = 25;

/// `request_timeout` of a model endpoint when the config gives none.
pub const DEFAULT_MODEL_TIMEOUT: Duration = Duration::from_secs(60);

/// `max_result_tokens` when the config gives none: about 100 KiB of text.
pub const DEFAULT_MAX_RESULT_TOKENS: u32 = 25_600;

/// The system prompt when the config gives none.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are the agent of aimon-console, a terminal operator \
console for MCP tool servers. You work with the tools listed to you; each one belongs to an MCP \
server the operator runs. Calls that may change something (mutating tools) wait for the \
operator's approval, and the operator may deny them: if a call is denied or refused, say so and \
do not try to get around it. Say briefly what you are about to do before you call a tool. \
Answer plainly and briefly.";

/// The `agent:` section, validated: at least one profile, and `default` names one of them.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// The profile used unless another is asked for (`--model NAME`, the console's switch).
    pub default: String,
    /// Every profile by name. An inline `agent:` (without `models`) is one profile, `default`.
    pub profiles: BTreeMap<String, ModelProfile>,
}

impl AgentConfig {
    /// The profile named `name`, or the default one; the error lists the names there are.
    pub fn profile(&self, name: Option<&str>) -> Result<&ModelProfile, String> {
        let wanted = name.unwrap_or(&self.default);
        self.profiles.get(wanted).ok_or_else(|| {
            let names: Vec<&str> = self.profiles.keys().map(String::as_str).collect();
            format!(
                "no model profile named {wanted:?} in agent.models (there are: {})",
                names.join(", ")
            )
        })
    }
}

/// Where a profile's endpoint is.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEndpoint {
    /// `base_url`: an endpoint that is already running (`…/v1`; `/chat/completions` is added).
    Url(String),
    /// `command`: a program the console starts (and kills when it exits, with everything it
    /// started); the first line it prints on stdout is its base URL (a leading `listening on `
    /// is skipped).
    Command {
        command: String,
        args: Vec<String>,
        /// Added to the inherited environment; values under secret names are redacted.
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
}

/// The API a model endpoint speaks (a profile's `provider:`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ModelProvider {
    /// `openai-chat`: Chat Completions (`…/chat/completions`): OpenAI, and every local server
    /// (llama.cpp, Ollama, LM Studio, vLLM), LiteLLM, OpenRouter, Gemini's OpenAI endpoint.
    #[default]
    OpenAiChat,
    /// `anthropic`: the Messages API (`…/messages`) of Anthropic (`https://api.anthropic.com/v1`).
    Anthropic,
    /// `openai-responses`: the Responses API (`…/responses`) of OpenAI.
    OpenAiResponses,
}

impl ModelProvider {
    /// The names `provider:` takes, in the order of the variants.
    pub const NAMES: [&'static str; 3] = ["openai-chat", "anthropic", "openai-responses"];

    pub fn as_str(self) -> &'static str {
        match self {
            ModelProvider::OpenAiChat => Self::NAMES[0],
            ModelProvider::Anthropic => Self::NAMES[1],
            ModelProvider::OpenAiResponses => Self::NAMES[2],
        }
    }

    /// The provider named `name`, if there is one.
    pub fn named(name: &str) -> Option<ModelProvider> {
        [
            ModelProvider::OpenAiChat,
            ModelProvider::Anthropic,
            ModelProvider::OpenAiResponses,
        ]
        .into_iter()
        .find(|p| p.as_str() == name)
    }
}

/// One model profile. Its Debug output redacts `api_key` and secret header and env values.
#[derive(Clone, PartialEq)]
pub struct ModelProfile {
    /// Its name in `agent.models` (`default` for an inline `agent:`).
    pub name: String,
    pub endpoint: ModelEndpoint,
    /// The `model` field of every request.
    pub model: String,
    /// The API the endpoint speaks.
    pub provider: ModelProvider,
    /// Sent as `Authorization: Bearer …`. A secret: never shown, logged or written.
    pub api_key: Option<String>,
    /// Sent with every request; values may use `${VAR}`.
    pub headers: BTreeMap<String, String>,
    pub system_prompt: String,
    /// Model turns per prompt before the agent stops.
    pub max_turns: u32,
    /// The longest the endpoint may stay silent: connecting, waiting for the answer, and
    /// between two pieces of a streamed answer.
    pub request_timeout: Duration,
    /// Ask for a streamed answer (server-sent events).
    pub stream: bool,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    /// The model's context window in tokens, when the profile gives it: the meter's whole,
    /// and what compaction and tool search measure against.
    pub context_window: Option<u32>,
    /// A tool result longer than this (in tokens, about four bytes each) reaches the model cut
    /// to its head and tail; the whole is kept for `read_result`.
    pub max_result_tokens: u32,
    /// When the model is offered `search_tools` instead of every tool definition.
    pub tool_search: ToolSearch,
}

/// `tool_search:` of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSearch {
    /// Every tool definition, always.
    Off,
    /// `search_tools` when the definitions would take more than this share of the context
    /// window (in percent; only with `context_window`). `auto` is `auto:10%`.
    Auto(u8),
    /// `search_tools` always.
    Always,
}

impl Default for ToolSearch {
    fn default() -> Self {
        ToolSearch::Auto(10)
    }
}

impl ToolSearch {
    /// `off`, `always`, `auto` or `auto:N%`.
    pub fn parse(text: &str) -> Option<ToolSearch> {
        match text.trim() {
            "off" => Some(ToolSearch::Off),
            "always" => Some(ToolSearch::Always),
            "auto" => Some(ToolSearch::default()),
            other => {
                let percent: u8 = other
                    .strip_prefix("auto:")?
                    .trim()
                    .strip_suffix('%')?
                    .trim()
                    .parse()
                    .ok()?;
                (1..=100)
                    .contains(&percent)
                    .then_some(ToolSearch::Auto(percent))
            }
        }
    }
}

impl ModelProfile {
    /// A profile for the running endpoint at `base_url`, every other setting at its default
    /// (embedders, tests, benches).
    pub fn url(name: &str, base_url: &str, model: &str) -> Self {
        ModelProfile {
            name: name.to_string(),
            endpoint: ModelEndpoint::Url(base_url.to_string()),
            model: model.to_string(),
            provider: ModelProvider::default(),
            api_key: None,
            headers: BTreeMap::new(),
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_string(),
            max_turns: DEFAULT_MAX_TURNS,
            request_timeout: DEFAULT_MODEL_TIMEOUT,
            stream: true,
            temperature: None,
            max_tokens: None,
            context_window: None,
            max_result_tokens: DEFAULT_MAX_RESULT_TOKENS,
            tool_search: ToolSearch::default(),
        }
    }
}

impl std::fmt::Debug for ModelProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let endpoint: &dyn std::fmt::Debug = match &self.endpoint {
            ModelEndpoint::Url(url) => url,
            ModelEndpoint::Command { command, .. } => command,
        };
        let env = match &self.endpoint {
            ModelEndpoint::Command { env, .. } => Some(redact::RedactedMap(env)),
            ModelEndpoint::Url(_) => None,
        };
        f.debug_struct("ModelProfile")
            .field("name", &self.name)
            .field("endpoint", endpoint)
            .field("env", &env)
            .field("model", &self.model)
            .field("provider", &self.provider)
            .field("api_key", &redact::RedactedSecret(self.api_key.as_deref()))
            .field("headers", &redact::RedactedMap(&self.headers))
            .field("max_turns", &self.max_turns)
            .field("request_timeout", &self.request_timeout)
            .field("stream", &self.stream)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("context_window", &self.context_window)
            .field("max_result_tokens", &self.max_result_tokens)
            .field("tool_search", &self.tool_search)
            .finish()
    }
}

#[cfg(test)]
#[path = "agent_tests.rs"]
mod tests;
