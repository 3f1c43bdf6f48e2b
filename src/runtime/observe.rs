//! `Observer`: what sees a runtime from outside, as it happens, without being its driver: every
//! event as it is published, and each model request the agent makes over the runtime. The
//! telemetry exporter is one (`src/telemetry`); the arrow points down, as the runtime only
//! calls the trait.

use std::time::{Duration, SystemTime};

use super::events::RuntimeEvent;

/// Sees a runtime's events and model requests. Called on the publishing task, under no lock:
/// it must not block or wait (hand work off, drop what does not fit).
pub trait Observer: Send + Sync {
    /// An event, before the driver reads it (whether or not the driver keeps up).
    fn event(&self, event: &RuntimeEvent);

    /// A model request ended (answered or failed).
    fn model_request(&self, request: &ModelRequest);

    /// Sends on what it holds; called as the runtime closes, from a blocking thread, and may
    /// take up to its own bound.
    fn flush(&self) -> Result<(), String>;
}

/// One model request as an observer sees it: what was asked of whom, how long it took, what
/// came back. Token counts are those the endpoint reported.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// The profile's provider (`openai-chat`, `anthropic`, `openai-responses`).
    pub provider: &'static str,
    pub model: String,
    /// `host[:port]` of the endpoint.
    pub address: String,
    pub started: SystemTime,
    pub took: Duration,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cached_input_tokens: Option<u64>,
    /// Why the answer ended (`stop`, `tool_calls`, `length`, …).
    pub finish_reason: Option<String>,
    /// The failure class, when it failed.
    pub error: Option<String>,
}
