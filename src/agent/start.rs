//! Getting an agent going: the runtime it drives (the one place that asks the runtime factory
//! for one, so a change in how servers join touches only this), and the model endpoint and
//! client of a profile.

use std::sync::Arc;

use super::client::{HttpModelClient, ModelClient};
use super::endpoint::{self, Endpoint};
use super::failure::ModelError;
use crate::config::{Config, ModelProfile};
use crate::runtime::{AgentRuntime, AgentRuntimeFactory, RuntimeError, RuntimeEvents};

/// The runtime an agent drives, publishing on `events`: the local tools at once, every
/// configured server's as it becomes ready (`AgentRuntime::wait_started` waits for all; the
/// loop takes in whoever joined at each turn boundary).
pub async fn start_runtime(
    config: &Config,
    events: RuntimeEvents,
) -> Result<Arc<AgentRuntime>, RuntimeError> {
    AgentRuntimeFactory::create(config, crate::telemetry::options(config), events)
        .await
        .map(Arc::new)
}

/// A model profile's endpoint (started, for a `command:` profile) and a client for it. Keep
/// the [`Endpoint`] as long as the client is used: dropping it stops a started endpoint.
pub async fn start_model(
    profile: &ModelProfile,
) -> Result<(Endpoint, Arc<dyn ModelClient>), ModelError> {
    let endpoint = endpoint::start(profile).await?;
    let client = HttpModelClient::new(profile, &endpoint.base_url)?;
    Ok((endpoint, Arc::new(client)))
}
