//! The model endpoints the daemon started, one per profile, shared by every agent session and
//! every `sample`: a `command:` profile's model server takes seconds to load and may hold a
//! model in memory, so the daemon starts it once, at the first request that needs it, and keeps
//! it until a request finds it gone (the next request starts it again) or the daemon stops. A
//! refusal (an error status, an answer that is not one) keeps it: a new process would load the
//! model again and answer the same.

use std::collections::HashMap;
use std::sync::Arc;

use crate::agent::endpoint::Endpoint;
use crate::agent::observe::observed;
use crate::agent::start::start_model;
use crate::agent::{ModelClient, ModelError, ModelFailureClass};
use crate::config::ModelProfile;
use crate::runtime::AgentRuntime;

/// The started endpoints, by profile name.
#[derive(Default)]
pub struct Models(tokio::sync::Mutex<HashMap<String, Arc<Started>>>);

/// A started endpoint and its client: dropping the last handle stops a started process.
pub struct Started {
    endpoint: Endpoint,
    client: Arc<dyn ModelClient>,
}

impl Started {
    /// Whether a request that failed with `error` found the endpoint gone: its process ended,
    /// nothing accepted the connection, or it went silent past `request_timeout`.
    pub fn gone(&self, error: &ModelError) -> bool {
        matches!(
            error.class,
            ModelFailureClass::ConnectRefused | ModelFailureClass::Timeout
        ) || self.endpoint.ended()
    }

    /// Its client, observed as every model request of the daemon is (telemetry).
    pub fn client(&self, runtime: &AgentRuntime, profile: &ModelProfile) -> Arc<dyn ModelClient> {
        observed(
            self.client.clone(),
            runtime,
            profile,
            &self.endpoint.base_url,
        )
    }
}

impl Models {
    /// `profile`'s endpoint, started now if it is not running (one start at a time: two
    /// requests at once share it).
    pub async fn get(&self, profile: &ModelProfile) -> Result<Arc<Started>, ModelError> {
        let mut kept = self.0.lock().await;
        if let Some(started) = kept.get(&profile.name) {
            return Ok(started.clone());
        }
        let (endpoint, client) = start_model(profile).await?;
        let started = Arc::new(Started { endpoint, client });
        kept.insert(profile.name.clone(), started.clone());
        Ok(started)
    }

    /// Whether `started` is still the one kept for `profile` (not let go after a failure).
    pub async fn keeps(&self, profile: &str, started: &Arc<Started>) -> bool {
        let kept = self.0.lock().await;
        kept.get(profile).is_some_and(|k| Arc::ptr_eq(k, started))
    }

    /// Lets `failed` go, if it is still the one kept for `profile` (its process stops once
    /// no session or request holds it): one a request found [gone](Started::gone).
    pub async fn forget(&self, profile: &str, failed: &Arc<Started>) {
        let mut kept = self.0.lock().await;
        if kept.get(profile).is_some_and(|k| Arc::ptr_eq(k, failed)) {
            kept.remove(profile);
        }
    }

    /// Lets every endpoint go: each stops once no session or request holds it (the daemon is
    /// stopping).
    pub async fn clear(&self) {
        self.0.lock().await.clear();
    }
}
