//! A model client whose requests an observer (telemetry) sees: each `complete` timed and
//! reported as a [`ModelRequest`], answered or failed, with the endpoint's token counts.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use super::client::{ModelClient, ModelEvent};
use super::failure::ModelError;
use super::stream::ModelReply;
use super::turn::{History, ToolChoice, ToolList};
use crate::config::ModelProfile;
use crate::runtime::{AgentRuntime, ModelRequest, Observer};

/// `client`, reporting its requests to `runtime`'s observer; `client` itself when nobody
/// observes. `base_url` is the endpoint's (a started one's address is known only then).
pub fn observed(
    client: Arc<dyn ModelClient>,
    runtime: &AgentRuntime,
    profile: &ModelProfile,
    base_url: &str,
) -> Arc<dyn ModelClient> {
    match runtime.observer() {
        None => client,
        Some(observer) => Arc::new(Observed {
            inner: client,
            observer,
            provider: profile.provider.as_str(),
            address: authority(base_url),
        }),
    }
}

/// `host[:port]` of a URL.
fn authority(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split(['/', '?', '#'])
        .next()
        .unwrap_or_default()
        .to_string()
}

struct Observed {
    inner: Arc<dyn ModelClient>,
    observer: Arc<dyn Observer>,
    provider: &'static str,
    address: String,
}

impl std::fmt::Debug for Observed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observed")
            .field("inner", &self.inner)
            .finish()
    }
}

#[async_trait::async_trait]
impl ModelClient for Observed {
    async fn complete(
        &self,
        history: &History,
        tools: &ToolList,
        choice: ToolChoice,
        events: &(dyn Fn(ModelEvent) + Send + Sync),
    ) -> Result<ModelReply, ModelError> {
        let (started, clock) = (SystemTime::now(), Instant::now());
        let reply = self.inner.complete(history, tools, choice, events).await;
        let usage = reply.as_ref().ok().and_then(|r| r.usage);
        self.observer.model_request(&ModelRequest {
            provider: self.provider,
            model: self.inner.model().to_string(),
            address: self.address.clone(),
            started,
            took: clock.elapsed(),
            input_tokens: usage.map(|u| u.input_tokens),
            output_tokens: usage.map(|u| u.output_tokens),
            cached_input_tokens: usage.map(|u| u.cached_input_tokens),
            finish_reason: reply
                .as_ref()
                .ok()
                .and_then(|r| r.finish_reason.as_ref())
                .map(|f| f.as_str().to_string()),
            error: reply.as_ref().err().map(|e| e.class.as_str().to_string()),
        });
        reply
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    /// A server's sampling request answered by the model, or a compaction's summary: reported
    /// as well.
    fn limited(&self, max_tokens: u32, temperature: Option<f64>) -> Arc<dyn ModelClient> {
        Arc::new(Observed {
            inner: self.inner.limited(max_tokens, temperature),
            observer: self.observer.clone(),
            provider: self.provider,
            address: self.address.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn authority_is_host_and_port() {
        assert_eq!(
            super::authority("http://127.0.0.1:8080/v1"),
            "127.0.0.1:8080"
        );
        assert_eq!(
            super::authority("https://api.openai.com/v1"),
            "api.openai.com"
        );
        assert_eq!(super::authority("localhost"), "localhost");
    }
}
