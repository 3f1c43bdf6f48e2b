//! The runtime's JSON shapes read back (the inverse of `json.rs`): what a console attached to
//! a daemon (docs/daemon.md) makes of the events and tools the daemon sends, so that it shows
//! them as it shows its own runtime's. Only what a console shows is read back; an event it
//! does not show is `None`, and a field that cannot be read makes the whole event `None`
//! rather than a guess.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::RuntimeEvent;
use crate::approval::{AnsweredBy, ApprovalDecision, ApprovalRequest, CallOrigin};
use crate::config::AnnotationTrust;
use crate::mcp::events::McpEvent;
use crate::tool::{DestructiveBehavior, JsonText, ToolDescriptor, ToolOrigin};

/// Field `name` of `v` read as a `T`, straight from the value (nothing copied: a call's
/// result can be large); `None` when it is missing or not a `T`.
pub fn field<T: DeserializeOwned>(v: &Value, name: &str) -> Option<T> {
    T::deserialize(v.get(name)?).ok()
}

fn text(v: &Value, name: &str) -> Option<String> {
    v.get(name)?.as_str().map(str::to_string)
}

fn millis(v: &Value, name: &str) -> Option<Duration> {
    v.get(name)?.as_u64().map(Duration::from_millis)
}

/// A `TOOL` object (`check --json`, the daemon's `tools`) as a descriptor. The object does
/// not carry the tool's description, schema or pin: they are empty.
pub fn tool_from_json(v: &Value) -> Option<ToolDescriptor> {
    let name = text(v, "name")?;
    let destructive = match v.get("destructive")?.as_bool()? {
        true => DestructiveBehavior::Destructive,
        false => DestructiveBehavior::NonDestructive,
    };
    let origin = match v.get("local").and_then(Value::as_bool) {
        Some(true) => None,
        _ => Some(ToolOrigin {
            server: text(v, "server")?,
            tool: text(v, "tool")?,
            trust: field::<AnnotationTrust>(v, "trust").unwrap_or_default(),
            annotations: v
                .get("annotations")
                .filter(|a| !a.is_null())
                .map(JsonText::from_value),
            title: None,
            output_schema: None,
        }),
    };
    Some(ToolDescriptor {
        name,
        description: text(v, "description").unwrap_or_default(),
        input_schema: JsonText::from_value(&serde_json::json!({"type": "object"})),
        side_effect: field(v, "side_effect")?,
        destructive,
        provenance: text(v, "provenance").unwrap_or_default(),
        flags: Vec::new(),
        pin: None,
        origin,
    })
}

/// An `approval_requested` event as a request to answer, and the receiver its answer comes
/// out of (the console sends it on to the daemon).
pub fn approval_from_json(
    v: &Value,
) -> Option<(
    ApprovalRequest,
    tokio::sync::oneshot::Receiver<ApprovalDecision>,
)> {
    let (mut request, answer) = ApprovalRequest::new(
        v.get("id")?.as_u64()?,
        tool_from_json(v.get("tool")?)?,
        v.get("arguments").cloned().unwrap_or(Value::Null),
        text(v, "why").unwrap_or_default(),
    );
    request.origin = field::<CallOrigin>(v, "origin").unwrap_or_default();
    Some((request, answer))
}

/// A decision by its JSON name (`allow_once`, …).
pub fn decision_named(name: &str) -> Option<ApprovalDecision> {
    ApprovalDecision::ALL
        .into_iter()
        .find(|d| d.as_str() == name)
}

/// The event of a `watch --json` line, for the events a console shows; `approval_requested`
/// is [`approval_from_json`]'s.
pub fn event_from_json(v: &Value) -> Option<RuntimeEvent> {
    let server = || text(v, "server");
    let id = || v.get("id").and_then(Value::as_u64);
    let event = match v.get("type")?.as_str()? {
        "phase" => RuntimeEvent::Mcp(McpEvent::PhaseStarted {
            server: server()?,
            phase: field(v, "phase")?,
            elapsed: millis(v, "elapsed_ms")?,
        }),
        "server_started" => {
            RuntimeEvent::Mcp(McpEvent::ServerStarted(Box::new(field(v, "report")?)))
        }
        "stderr" => RuntimeEvent::Mcp(McpEvent::Stderr {
            server: server()?,
            line: text(v, "line")?,
        }),
        "server_closed" => RuntimeEvent::Mcp(McpEvent::ServerClosed { server: server()? }),
        "server_down" => RuntimeEvent::Mcp(McpEvent::ServerDown {
            server: server()?,
            exit: field(v, "exit_status"),
            reason: text(v, "reason").unwrap_or_default(),
            uptime: millis(v, "uptime_ms").unwrap_or_default(),
            crashes: field(v, "crashes").unwrap_or_default(),
            at: std::time::SystemTime::now(),
            restart: field(v, "restart")?,
        }),
        "restart_scheduled" => RuntimeEvent::Mcp(McpEvent::RestartScheduled {
            server: server()?,
            attempt: field(v, "attempt")?,
            delay: millis(v, "delay_ms")?,
            crashes: field(v, "crashes").unwrap_or_default(),
        }),
        "gave_up" => RuntimeEvent::Mcp(McpEvent::GaveUp {
            server: server()?,
            crashes: field(v, "crashes").unwrap_or_default(),
        }),
        "call_started" => RuntimeEvent::CallStarted {
            id: id()?,
            tool: text(v, "tool")?,
            arguments: v.get("arguments").cloned().unwrap_or(Value::Null),
            origin: field(v, "origin").unwrap_or_default(),
        },
        "call_status" => RuntimeEvent::CallStatus {
            id: id()?,
            status: field(v, "status")?,
        },
        "call_finished" => RuntimeEvent::CallFinished {
            id: id()?,
            status: field(v, "status")?,
            result: field(v, "result")?,
            elapsed_ms: v.get("elapsed_ms")?.as_u64()?,
        },
        "approval_answered" => RuntimeEvent::ApprovalAnswered {
            id: id()?,
            decision: decision_named(v.get("decision")?.as_str()?)?,
            by: AnsweredBy::named(v.get("by")?.as_str()?).unwrap_or(AnsweredBy::Operator),
        },
        "call_allowed" => RuntimeEvent::CallAllowed {
            id: id()?,
            why: text(v, "why")?,
        },
        "call_progress" => RuntimeEvent::CallProgress {
            id: id()?,
            progress: v.get("progress")?.as_f64()?,
            total: v.get("total").and_then(Value::as_f64),
            message: text(v, "message"),
        },
        "server_log" => RuntimeEvent::ServerLog {
            server: server()?,
            level: field(v, "level")?,
            logger: text(v, "logger"),
            data: v.get("data").cloned().unwrap_or(Value::Null),
        },
        kind @ ("host_connected" | "host_left") => RuntimeEvent::HostSession {
            name: text(v, "name")?,
            version: text(v, "version").unwrap_or_default(),
            connected: kind == "host_connected",
        },
        "events_dropped" => RuntimeEvent::EventsDropped {
            count: v.get("count")?.as_u64()?,
        },
        "list_changed" => RuntimeEvent::ListChanged {
            server: server()?,
            list: field(v, "list")?,
        },
        "resource_updated" => RuntimeEvent::ResourceUpdated {
            server: server()?,
            uri: text(v, "uri")?,
        },
        _ => return None,
    };
    Some(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::events::{PhaseTimes, ServerReport, ServerStatus, StartPhase};
    use crate::runtime::event_json;
    use crate::runtime::CallStatus;
    use crate::tool::{SideEffectLevel, ToolResult};
    use serde_json::json;

    /// What the console reads back is what was written: the JSON of the event read back is
    /// the JSON it was read from.
    fn round_trip(event: RuntimeEvent) {
        let written = event_json(&event);
        let read =
            event_from_json(&written).unwrap_or_else(|| panic!("{written} was not read back"));
        assert_eq!(event_json(&read), written);
    }

    #[test]
    fn the_events_a_console_shows_come_back_as_they_were() {
        let mut report =
            ServerReport::starting(&crate::config::ServerConfig::stdio("fs", "npx", vec![]));
        report.status = ServerStatus::Ready;
        report.tools = 3;
        report.phases = PhaseTimes {
            spawn_ms: Some(4),
            handshake_ms: Some(9),
            ..PhaseTimes::default()
        };
        report.warnings = vec!["slow".into()];
        round_trip(RuntimeEvent::Mcp(McpEvent::ServerStarted(Box::new(report))));
        round_trip(RuntimeEvent::Mcp(McpEvent::PhaseStarted {
            server: "fs".into(),
            phase: StartPhase::Handshake,
            elapsed: Duration::from_millis(12),
        }));
        round_trip(RuntimeEvent::CallStarted {
            id: 7,
            tool: "mcp__fs__write".into(),
            arguments: json!({"path": "/tmp/a"}),
            origin: CallOrigin::Agent {
                reason: "to save it".into(),
            },
        });
        round_trip(RuntimeEvent::CallStatus {
            id: 7,
            status: CallStatus::AwaitingApproval,
        });
        let mut result = ToolResult::ok("written");
        result.structured = Some(json!({"bytes": 3}));
        round_trip(RuntimeEvent::CallFinished {
            id: 7,
            status: CallStatus::Ok,
            result,
            elapsed_ms: 41,
        });
        round_trip(RuntimeEvent::ApprovalAnswered {
            id: 7,
            decision: ApprovalDecision::AllowForSession,
            by: AnsweredBy::Operator,
        });
        round_trip(RuntimeEvent::CallProgress {
            id: 7,
            progress: 0.5,
            total: Some(1.0),
            message: Some("half".into()),
        });
        round_trip(RuntimeEvent::HostSession {
            name: "claude-code".into(),
            version: "2.1".into(),
            connected: false,
        });
        round_trip(RuntimeEvent::ListChanged {
            server: "fs".into(),
            list: crate::mcp::notify::ListKind::Resources,
        });
        round_trip(RuntimeEvent::ResourceUpdated {
            server: "fs".into(),
            uri: "file:///a".into(),
        });
    }

    #[test]
    fn an_approval_comes_back_with_its_tool_and_who_asked() {
        let tool = ToolDescriptor {
            name: "mcp__fs__write".into(),
            description: String::new(),
            input_schema: JsonText::from_value(&json!({"type": "object"})),
            side_effect: SideEffectLevel::Mutating,
            destructive: DestructiveBehavior::Destructive,
            provenance: "destructiveHint=true, trusted".into(),
            flags: Vec::new(),
            pin: None,
            origin: Some(ToolOrigin {
                server: "fs".into(),
                tool: "write".into(),
                trust: AnnotationTrust::Trust,
                annotations: Some(JsonText::from_value(&json!({"destructiveHint": true}))),
                title: None,
                output_schema: None,
            }),
        };
        let (mut request, _answer) =
            ApprovalRequest::new(3, tool.clone(), json!({"path": "a"}), "mutating".into());
        request.origin = CallOrigin::Agent {
            reason: "save".into(),
        };
        let written = event_json(&RuntimeEvent::ApprovalRequested(request));
        let (read, _answer) = approval_from_json(&written).expect("read back");
        assert_eq!(read.id, 3);
        assert_eq!(read.tool, tool);
        assert_eq!(read.why, "mutating");
        assert_eq!(read.arguments, json!({"path": "a"}));
        assert_eq!(event_json(&RuntimeEvent::ApprovalRequested(read)), written);
    }

    #[test]
    fn what_cannot_be_read_is_not_guessed() {
        assert!(event_from_json(&json!({"type": "call_status", "id": 1})).is_none());
        assert!(event_from_json(&json!({"type": "call_status", "id": 1, "status": "?"})).is_none());
        assert!(event_from_json(&json!({"type": "something_new", "id": 1})).is_none());
        assert!(event_from_json(&json!("not an object")).is_none());
        assert!(approval_from_json(&json!({"type": "approval_requested", "id": 1})).is_none());
    }
}
