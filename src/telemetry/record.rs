//! What becomes a span or a metric: a server's start with its phases as children, a call with
//! its approval wait as a child and the decision as attributes, a model request with the
//! GenAI semantic conventions' attributes. Spans are made once their end is known, with the
//! times they happened at.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, SystemTime};

use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::SdkTracer;

use crate::approval::ApprovalDecision;
use crate::config::redact::Secrets;
use crate::runtime::{
    AnsweredBy, CallOrigin, CallStatus, ModelRequest, ServerReport, ServerStatus,
};

/// A call from its start to its end.
pub struct OpenCall {
    tool: String,
    origin: CallOrigin,
    started: SystemTime,
    arguments: Option<String>,
    /// Why it ran without asking (a rule, a hook, a session approval).
    allowed_by: Option<String>,
    approval: Option<Wait>,
}

/// An approval wait: when it was asked, and when and how it was answered.
struct Wait {
    asked: SystemTime,
    why: String,
    answer: Option<(SystemTime, ApprovalDecision, AnsweredBy)>,
}

/// The instruments, made once.
pub struct Instruments {
    calls: Counter<u64>,
    approval_wait: Histogram<f64>,
    servers_up: UpDownCounter<i64>,
    server_start: Histogram<f64>,
    model_duration: Histogram<f64>,
    model_tokens: Histogram<u64>,
}

impl Instruments {
    pub fn new(meter: &Meter) -> Instruments {
        Instruments {
            calls: meter
                .u64_counter("aimon.calls")
                .with_description("Tool calls ended, by status and origin")
                .build(),
            approval_wait: meter
                .f64_histogram("aimon.approval.wait")
                .with_unit("s")
                .with_description("How long calls waited for an approval")
                .build(),
            servers_up: meter
                .i64_up_down_counter("aimon.servers.up")
                .with_description("Servers ready")
                .build(),
            server_start: meter
                .f64_histogram("aimon.server.start.duration")
                .with_unit("s")
                .with_description("How long servers took to start, ready or failed")
                .build(),
            model_duration: meter
                .f64_histogram("gen_ai.client.operation.duration")
                .with_unit("s")
                .build(),
            model_tokens: meter
                .u64_histogram("gen_ai.client.token.usage")
                .with_unit("{token}")
                .build(),
        }
    }
}

/// Everything that is recorded, and the state between a call's start and its end.
pub struct Recorder {
    pub tracer: SdkTracer,
    pub instruments: Instruments,
    pub calls: HashMap<u64, OpenCall>,
    pub up: HashSet<String>,
    pub include_payloads: bool,
    /// Values that must never leave: the config's keys, tokens and secret env values.
    pub secrets: Secrets,
}

impl Recorder {
    /// More values to scrub (a config read again).
    pub fn add_secrets(&mut self, more: &Secrets) {
        self.secrets = self.secrets.with(more);
    }

    fn scrub(&self, text: &str) -> String {
        self.secrets.scrub(text).into_owned()
    }

    /// A server's start ended (ready or failed): its span, a child per phase reached.
    pub fn server_started(&mut self, report: &ServerReport) {
        let ready = report.status == ServerStatus::Ready;
        if !ready && report.status != ServerStatus::Failed {
            return;
        }
        let end = SystemTime::now();
        let took = report.start_took().unwrap_or_default();
        let own_start = end.checked_sub(took).unwrap_or(end);
        let queued = Duration::from_millis(report.phases.queued_ms.unwrap_or(0));
        let begin = own_start.checked_sub(queued).unwrap_or(own_start);
        let mut attributes = vec![
            KeyValue::new("aimon.server.name", report.name.clone()),
            KeyValue::new("aimon.server.transport", report.transport.as_str()),
            KeyValue::new("aimon.server.status", report.status.as_str()),
            KeyValue::new("aimon.server.tools", report.tools as i64),
        ];
        if let Some(version) = &report.protocol_version {
            attributes.push(KeyValue::new("mcp.protocol.version", version.clone()));
        }
        let failure = report.failure.as_ref();
        if let Some(f) = failure {
            attributes.push(KeyValue::new("error.type", f.class.as_str()));
        }
        let span = self
            .tracer
            .span_builder(format!("start {}", report.name))
            .with_kind(SpanKind::Internal)
            .with_start_time(begin)
            .with_attributes(attributes)
            .start(&self.tracer);
        let cx = Context::new().with_span(span);
        let at = |ms: Option<u64>| ms.map(|ms| own_start + Duration::from_millis(ms));
        let p = report.phases;
        let mut phases = Vec::new();
        if queued > Duration::ZERO {
            phases.push(("queued", begin, Some(own_start)));
        }
        let first = if report.transport.is_http() {
            ("connect", p.connect_ms)
        } else {
            ("spawn", p.spawn_ms)
        };
        let mut from = own_start;
        for (name, ms) in [
            first,
            ("handshake", p.handshake_ms),
            ("list_tools", p.list_tools_ms),
        ] {
            let until = at(ms);
            phases.push((name, from, until));
            match until {
                Some(until) => from = until,
                None => break,
            }
        }
        for (name, from, until) in phases {
            let mut child = self
                .tracer
                .span_builder(name)
                .with_start_time(from)
                .with_attributes([KeyValue::new("aimon.server.phase", name)])
                .start_with_context(&self.tracer, &cx);
            if until.is_none() {
                if let Some(f) = failure {
                    child.set_status(Status::error(f.class.as_str()));
                }
            }
            child.end_with_timestamp(until.unwrap_or(end));
        }
        if let Some(f) = failure {
            cx.span().set_status(Status::error(self.scrub(&f.message)));
        }
        cx.span().end_with_timestamp(end);
        let attributes = [KeyValue::new("aimon.server.status", report.status.as_str())];
        self.instruments
            .server_start
            .record(took.as_secs_f64(), &attributes);
        if ready {
            self.server_up(&report.name);
        } else {
            self.server_down(&report.name);
        }
    }

    fn server_up(&mut self, server: &str) {
        if self.up.insert(server.to_string()) {
            self.instruments.servers_up.add(1, &[]);
        }
    }

    /// A server went away, was closed or failed to start.
    pub fn server_down(&mut self, server: &str) {
        if self.up.remove(server) {
            self.instruments.servers_up.add(-1, &[]);
        }
    }

    pub fn call_started(
        &mut self,
        id: u64,
        tool: &str,
        arguments: &serde_json::Value,
        origin: &CallOrigin,
    ) {
        let arguments = self.include_payloads.then(|| arguments.to_string());
        self.calls.insert(
            id,
            OpenCall {
                tool: tool.to_string(),
                origin: origin.clone(),
                started: SystemTime::now(),
                arguments,
                allowed_by: None,
                approval: None,
            },
        );
    }

    pub fn call_allowed(&mut self, id: u64, why: &str) {
        if let Some(call) = self.calls.get_mut(&id) {
            call.allowed_by = Some(why.to_string());
        }
    }

    pub fn approval_asked(&mut self, id: u64, why: &str) {
        if let Some(call) = self.calls.get_mut(&id) {
            call.approval = Some(Wait {
                asked: SystemTime::now(),
                why: why.to_string(),
                answer: None,
            });
        }
    }

    pub fn approval_answered(&mut self, id: u64, decision: ApprovalDecision, by: AnsweredBy) {
        let wait = self
            .calls
            .get_mut(&id)
            .and_then(|call| call.approval.as_mut());
        if let Some(wait) = wait {
            let now = SystemTime::now();
            wait.answer = Some((now, decision, by));
            let waited = now.duration_since(wait.asked).unwrap_or_default();
            let attributes = [KeyValue::new("aimon.approval.decision", decision.as_str())];
            self.instruments
                .approval_wait
                .record(waited.as_secs_f64(), &attributes);
        }
    }

    /// A call ended: its span, with the approval wait as a child.
    pub fn call_finished(&mut self, id: u64, status: CallStatus, result: Option<&str>) {
        let Some(call) = self.calls.remove(&id) else {
            return;
        };
        let end = SystemTime::now();
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", "execute_tool"),
            KeyValue::new("gen_ai.tool.name", call.tool.clone()),
            KeyValue::new("aimon.call.id", id as i64),
            KeyValue::new("aimon.call.status", status.as_str()),
            KeyValue::new("aimon.call.origin", call.origin.as_str()),
        ];
        if let CallOrigin::Host { name, version } = &call.origin {
            attributes.push(KeyValue::new("aimon.host.name", name.clone()));
            attributes.push(KeyValue::new("aimon.host.version", version.clone()));
        }
        if let Some(why) = &call.allowed_by {
            attributes.push(KeyValue::new("aimon.call.allowed_by", self.scrub(why)));
        }
        if let Some((_, decision, by)) = call.approval.as_ref().and_then(|w| w.answer) {
            attributes.push(KeyValue::new("aimon.approval.decision", decision.as_str()));
            attributes.push(KeyValue::new("aimon.approval.answered_by", by.as_str()));
        }
        if status == CallStatus::Error {
            attributes.push(KeyValue::new("error.type", "tool_error"));
        }
        if let Some(arguments) = &call.arguments {
            attributes.push(KeyValue::new(
                "gen_ai.tool.call.arguments",
                self.scrub(arguments),
            ));
        }
        if let Some(result) = result.filter(|_| self.include_payloads) {
            attributes.push(KeyValue::new("gen_ai.tool.call.result", self.scrub(result)));
        }
        let mut span = self
            .tracer
            .span_builder(format!("execute_tool {}", call.tool))
            .with_kind(SpanKind::Internal)
            .with_start_time(call.started)
            .with_attributes(attributes)
            .start(&self.tracer);
        if status == CallStatus::Error {
            span.set_status(Status::error("the tool failed"));
        }
        let cx = Context::new().with_span(span);
        if let Some(wait) = call.approval {
            let mut attributes = vec![KeyValue::new("aimon.approval.why", self.scrub(&wait.why))];
            let until = match wait.answer {
                Some((at, decision, by)) => {
                    attributes.push(KeyValue::new("aimon.approval.decision", decision.as_str()));
                    attributes.push(KeyValue::new("aimon.approval.answered_by", by.as_str()));
                    at
                }
                None => end,
            };
            self.tracer
                .span_builder("approval wait")
                .with_start_time(wait.asked)
                .with_attributes(attributes)
                .start_with_context(&self.tracer, &cx)
                .end_with_timestamp(until);
        }
        cx.span().end_with_timestamp(end);
        let attributes = [
            KeyValue::new("aimon.call.status", status.as_str()),
            KeyValue::new("aimon.call.origin", call.origin.as_str()),
        ];
        self.instruments.calls.add(1, &attributes);
    }

    /// A model request: a client span in the GenAI semantic conventions' words.
    pub fn model_request(&self, request: &ModelRequest) {
        let provider = match request.provider {
            "anthropic" => "anthropic",
            _ => "openai",
        };
        let base = [
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new("gen_ai.provider.name", provider),
            KeyValue::new("gen_ai.request.model", request.model.clone()),
        ];
        let mut attributes = base.to_vec();
        attributes.push(KeyValue::new("aimon.model.provider", request.provider));
        let (host, port) = match request.address.rsplit_once(':') {
            Some((host, port)) if port.parse::<u16>().is_ok() => (host, port.parse::<i64>().ok()),
            _ => (request.address.as_str(), None),
        };
        attributes.push(KeyValue::new("server.address", host.to_string()));
        if let Some(port) = port {
            attributes.push(KeyValue::new("server.port", port));
        }
        let tokens = [
            ("gen_ai.usage.input_tokens", "input", request.input_tokens),
            (
                "gen_ai.usage.output_tokens",
                "output",
                request.output_tokens,
            ),
            (
                "gen_ai.usage.cache_read.input_tokens",
                "",
                request.cached_input_tokens,
            ),
        ];
        for (key, kind, count) in tokens {
            let Some(count) = count else { continue };
            attributes.push(KeyValue::new(key, count as i64));
            if !kind.is_empty() {
                let mut with = base.to_vec();
                with.push(KeyValue::new("gen_ai.token.type", kind));
                self.instruments.model_tokens.record(count, &with);
            }
        }
        if let Some(reason) = &request.finish_reason {
            let reasons = Array::String(vec![StringValue::from(reason.clone())]);
            attributes.push(KeyValue::new(
                "gen_ai.response.finish_reasons",
                Value::Array(reasons),
            ));
        }
        let mut measured = base.to_vec();
        if let Some(error) = &request.error {
            attributes.push(KeyValue::new("error.type", error.clone()));
            measured.push(KeyValue::new("error.type", error.clone()));
        }
        let mut span = self
            .tracer
            .span_builder(format!("chat {}", request.model))
            .with_kind(SpanKind::Client)
            .with_start_time(request.started)
            .with_attributes(attributes)
            .start(&self.tracer);
        if let Some(error) = &request.error {
            span.set_status(Status::error(error.clone()));
        }
        span.end_with_timestamp(request.started + request.took);
        self.instruments
            .model_duration
            .record(request.took.as_secs_f64(), &measured);
    }
}
