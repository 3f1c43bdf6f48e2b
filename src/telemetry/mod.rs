//! Telemetry out: when `telemetry.otlp_endpoint` is set, traces and metrics go over OTLP/HTTP
//! to the operator's collector (docs/configuration.md, `telemetry:`). A span per server start
//! with its phases as children, a span per call with its approval wait as a child and the
//! decision as attributes, a span per model request with the GenAI semantic conventions'
//! attributes; metrics of calls by status, approval waits, servers up, start and model
//! durations, tokens. Arguments and results go only with `include_payloads: true`, scrubbed of
//! the config's secrets; keys, tokens and secret env values never. Nothing is sent, and
//! nothing of the SDK is made, while the endpoint is unset.
//!
//! The runtime sees it only as its `Observer` (runtime/observe.rs): this module sits above the
//! runtime and below the agent and the drivers, which install it.

mod export;
mod record;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;

use crate::config::redact::Secrets;
use crate::config::{Config, TelemetryConfig};
use crate::runtime::{McpEvent, ModelRequest, Observer, RuntimeEvent, RuntimeOptions};
use export::Providers;
use record::{Instruments, Recorder};

/// The observer of a runtime made for `config`: its telemetry, or none when
/// `telemetry.otlp_endpoint` is unset (or the exporter cannot be made: said in the log).
/// One per `telemetry:` section for the process (a console's restarted runtimes share it).
pub fn observer(config: &Config) -> Option<Arc<dyn Observer>> {
    let endpoint = config.telemetry.otlp_endpoint.as_deref()?;
    // Made ones are kept for the process: the SDK's providers stop their export threads when
    // dropped, a blocking wait no runtime thread should make.
    static MADE: Mutex<Vec<(TelemetryConfig, Arc<Telemetry>)>> = Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, telemetry)) = made.iter().find(|(c, _)| *c == config.telemetry) {
        // The same section in a config read again: its secrets may be new (a key rotated).
        telemetry
            .recorder()
            .add_secrets(&Secrets::of_config(config));
        return Some(telemetry.clone());
    }
    match export::providers(&config.telemetry, endpoint) {
        Ok(providers) => {
            let telemetry = Arc::new(Telemetry::new(providers, config));
            made.push((config.telemetry.clone(), telemetry.clone()));
            Some(telemetry)
        }
        Err(e) => {
            tracing::warn!(error = %e, "telemetry is off: the exporter could not be made");
            None
        }
    }
}

/// The runtime options of a command that runs `config`: the defaults, with its telemetry.
pub fn options(config: &Config) -> RuntimeOptions {
    RuntimeOptions {
        observer: observer(config),
        ..RuntimeOptions::default()
    }
}

/// One `telemetry:` section's providers and what is being recorded.
pub struct Telemetry {
    providers: Providers,
    recorder: Mutex<Recorder>,
}

impl Telemetry {
    fn new(providers: Providers, config: &Config) -> Telemetry {
        let tracer = providers.traces.tracer("aimon-console");
        let meter = providers.metrics.meter("aimon-console");
        let recorder = Recorder {
            tracer,
            instruments: Instruments::new(&meter),
            calls: HashMap::new(),
            up: HashSet::new(),
            include_payloads: config.telemetry.include_payloads,
            secrets: Secrets::of_config(config),
        };
        Telemetry {
            providers,
            recorder: Mutex::new(recorder),
        }
    }

    fn recorder(&self) -> MutexGuard<'_, Recorder> {
        self.recorder.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Observer for Telemetry {
    fn event(&self, event: &RuntimeEvent) {
        match event {
            RuntimeEvent::Mcp(McpEvent::ServerStarted(report)) => {
                self.recorder().server_started(report);
            }
            RuntimeEvent::Mcp(
                McpEvent::ServerDown { server, .. } | McpEvent::ServerClosed { server },
            ) => self.recorder().server_down(server),
            RuntimeEvent::CallStarted {
                id,
                tool,
                arguments,
                origin,
            } => self.recorder().call_started(*id, tool, arguments, origin),
            RuntimeEvent::CallAllowed { id, why } => self.recorder().call_allowed(*id, why),
            RuntimeEvent::ApprovalRequested(request) => {
                self.recorder().approval_asked(request.id, &request.why);
            }
            RuntimeEvent::ApprovalAnswered { id, decision, by } => {
                self.recorder().approval_answered(*id, *decision, *by);
            }
            RuntimeEvent::CallFinished {
                id, status, result, ..
            } => {
                self.recorder()
                    .call_finished(*id, *status, Some(result.text.as_str()));
            }
            _ => {}
        }
    }

    fn model_request(&self, request: &ModelRequest) {
        self.recorder().model_request(request);
    }

    /// Both at once: each waits for its export, which is bounded by `EXPORT_TIMEOUT`.
    fn flush(&self) -> Result<(), String> {
        let (traces, metrics) = std::thread::scope(|scope| {
            let traces = scope.spawn(|| self.providers.traces.force_flush());
            let metrics = self.providers.metrics.force_flush();
            (traces.join(), metrics)
        });
        match traces {
            Err(_) => Err("traces: the flush panicked".to_string()),
            Ok(Err(e)) => Err(format!("traces: {e}")),
            Ok(Ok(())) => metrics.map_err(|e| format!("metrics: {e}")),
        }
    }
}
