//! Telemetry out, end to end: `aimon-console run` on the demo server and demo model with
//! `telemetry.otlp_endpoint` set, exporting to a test collector built on the official
//! `opentelemetry-proto` Python package (tests/fixtures/otlp_receiver.py), which decodes what
//! arrived: a start-up span with its phases as children, a call span with its approval wait as
//! a child, a model-request span with the GenAI attributes, the metrics; no key, token or
//! secret env value in any of it; payloads only when asked, scrubbed; nothing sent when the
//! endpoint is unset.

mod common;
#[path = "peers/mod.rs"]
mod peers;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{bin, listening, run_in_state, Background};
use serde_json::Value;

const API_KEY: &str = "sk-model-key-77d1e0b3";
const ENV_SECRET: &str = "env-secret-4f9a2c61";
const OTEL_TOKEN: &str = "otel-token-9be45d02";

/// The test collector, writing what it decodes to `out`: it and its URL.
fn collector(out: &Path) -> (Background, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/otlp_receiver.py");
    let child = Command::new(peers::otel())
        .arg(script)
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the collector");
    listening(child)
}

/// A config of one demo server (a secret in its env) and the demo model (an API key), with
/// `telemetry` as its section (none when empty).
fn config(dir: &Path, telemetry: &str) -> PathBuf {
    let bin = bin();
    let yaml = format!(
        "mcp:
  servers:
    - name: notes
      command: {bin}
      args: [demo-server]
      annotation_trust: trust
      env: {{NOTES_API_TOKEN: {ENV_SECRET}}}
agent:
  models:
    demo:
      command: {bin}
      args: [demo-model, --prefer-server, notes]
      model: demo
      api_key: {API_KEY}
      request_timeout: 10s
{telemetry}"
    );
    let path = dir.join("aimon.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

fn telemetry_section(url: &str, payloads: bool) -> String {
    format!(
        "telemetry:
  otlp_endpoint: {url}
  headers: {{Authorization: \"Bearer ${{OTEL_TOKEN}}\"}}
  include_payloads: {payloads}
"
    )
}

/// `run PROMPT --yes --json` on `config`; asserts it answered.
fn run(state: &Path, config: &Path, prompt: &str, env: &[(&str, &str)]) {
    let out = run_in_state(
        state,
        config,
        &["run", prompt, "--yes", "--json"],
        env,
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What the collector received: one record per export.
fn received(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn spans(records: &[Value]) -> Vec<Value> {
    records
        .iter()
        .filter_map(|r| r["spans"].as_array())
        .flatten()
        .cloned()
        .collect()
}

fn span(spans: &[Value], test: impl Fn(&str) -> bool) -> &Value {
    spans
        .iter()
        .find(|s| test(s["name"].as_str().unwrap()))
        .unwrap_or_else(|| panic!("no such span among {spans:#?}"))
}

fn children<'a>(spans: &'a [Value], parent: &Value) -> Vec<&'a Value> {
    spans
        .iter()
        .filter(|s| s["parent_span_id"] == parent["span_id"] && s["trace_id"] == parent["trace_id"])
        .collect()
}

/// Every attribute value of every span and metric point, and the resources', as text.
fn attribute_text(records: &[Value]) -> String {
    let mut text = String::new();
    for record in records {
        for span in record["spans"].as_array().into_iter().flatten() {
            text.push_str(&span["attributes"].to_string());
            text.push_str(&span["resource"].to_string());
            text.push_str(&span["name"].to_string());
            text.push_str(&span["status"].to_string());
        }
        for metric in record["metrics"].as_array().into_iter().flatten() {
            text.push_str(&metric.to_string());
        }
    }
    text
}

#[test]
fn a_run_exports_the_start_the_call_with_its_approval_wait_and_the_model_request() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("received.jsonl");
    let (_collector, url) = collector(&out);
    let config = config(dir.path(), &telemetry_section(&url, false));
    run(
        dir.path(),
        &config,
        "save a note called t1 saying hi",
        &[("OTEL_TOKEN", OTEL_TOKEN)],
    );
    // The run flushed before it exited: everything is there.
    let records = received(&out);
    let spans = spans(&records);

    // The server's start, its phases as children within it.
    let start = span(&spans, |n| n == "start notes");
    assert_eq!(start["attributes"]["aimon.server.status"], "ready");
    assert_eq!(start["attributes"]["aimon.server.transport"], "stdio");
    assert_eq!(start["resource"]["service.name"], "aimon-console");
    let phases = children(&spans, start);
    let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    for phase in ["spawn", "handshake", "list_tools"] {
        assert!(names.contains(&phase), "{phase} missing from {names:?}");
    }
    for phase in &phases {
        assert!(
            phase["start"].as_u64() >= start["start"].as_u64(),
            "{phase}"
        );
        assert!(phase["end"].as_u64() <= start["end"].as_u64(), "{phase}");
    }

    // The call, its approval wait as a child, the decision as attributes.
    let call = span(&spans, |n| {
        n.starts_with("execute_tool ") && n.ends_with("__write_note")
    });
    let attributes = &call["attributes"];
    assert_eq!(attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(attributes["aimon.call.status"], "ok");
    assert_eq!(attributes["aimon.call.origin"], "agent");
    assert_eq!(attributes["aimon.approval.decision"], "allow_once");
    assert_eq!(attributes["aimon.approval.answered_by"], "yes_flag");
    assert!(
        attributes.get("gen_ai.tool.call.arguments").is_none(),
        "{call}"
    );
    assert!(
        attributes.get("gen_ai.tool.call.result").is_none(),
        "{call}"
    );
    let waits = children(&spans, call);
    assert_eq!(waits.len(), 1, "{waits:#?}");
    assert_eq!(waits[0]["name"], "approval wait");
    assert_eq!(
        waits[0]["attributes"]["aimon.approval.decision"],
        "allow_once"
    );
    assert!(waits[0]["start"].as_u64() >= call["start"].as_u64());
    assert!(waits[0]["end"].as_u64() <= call["end"].as_u64());

    // Each model request: a client span with the GenAI attributes.
    let chats: Vec<&Value> = spans.iter().filter(|s| s["name"] == "chat demo").collect();
    assert_eq!(
        chats.len(),
        2,
        "a turn that calls, a turn that answers: {chats:#?}"
    );
    for chat in &chats {
        let a = &chat["attributes"];
        assert_eq!(chat["kind"], 3, "SPAN_KIND_CLIENT");
        assert_eq!(a["gen_ai.operation.name"], "chat");
        assert_eq!(a["gen_ai.provider.name"], "openai");
        assert_eq!(a["gen_ai.request.model"], "demo");
        assert_eq!(a["server.address"], "127.0.0.1");
        assert!(a["gen_ai.usage.input_tokens"].as_i64() > Some(0), "{chat}");
        assert!(a["gen_ai.usage.output_tokens"].as_i64() > Some(0), "{chat}");
    }
    let reasons: Vec<&Value> = chats
        .iter()
        .map(|c| &c["attributes"]["gen_ai.response.finish_reasons"])
        .collect();
    assert!(
        reasons.contains(&&serde_json::json!(["tool_calls"])),
        "{reasons:?}"
    );
    assert!(
        reasons.contains(&&serde_json::json!(["stop"])),
        "{reasons:?}"
    );

    // The metrics.
    let metrics: Vec<&str> = records
        .iter()
        .filter_map(|r| r["metrics"].as_array())
        .flatten()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    for name in [
        "aimon.calls",
        "aimon.approval.wait",
        "aimon.servers.up",
        "aimon.server.start.duration",
        "gen_ai.client.operation.duration",
        "gen_ai.client.token.usage",
    ] {
        assert!(metrics.contains(&name), "{name} missing from {metrics:?}");
    }

    // The collector's header went with every export; no secret in anything exported.
    assert!(records
        .iter()
        .all(|r| r["headers"]["authorization"] == format!("Bearer {OTEL_TOKEN}")));
    let text = attribute_text(&records);
    for secret in [API_KEY, ENV_SECRET, OTEL_TOKEN] {
        assert!(!text.contains(secret), "{secret} was exported");
    }
}

#[test]
fn payloads_go_only_when_asked_and_without_the_configs_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("received.jsonl");
    let (_collector, url) = collector(&out);
    let config = config(dir.path(), &telemetry_section(&url, true));
    // The model writes a secret of the config into the call's arguments.
    let prompt = format!("save a note called t2 saying {ENV_SECRET}");
    run(dir.path(), &config, &prompt, &[("OTEL_TOKEN", OTEL_TOKEN)]);
    let records = received(&out);
    let spans = spans(&records);
    let call = span(&spans, |n| n.ends_with("__write_note"));
    let arguments = call["attributes"]["gen_ai.tool.call.arguments"]
        .as_str()
        .expect("the arguments, asked for");
    assert_eq!(arguments, r#"{"title":"t2","body":"<redacted>"}"#);
    let result = call["attributes"]["gen_ai.tool.call.result"]
        .as_str()
        .expect("the result, asked for");
    assert_eq!(result, "saved note \"t2\"");
    assert!(!attribute_text(&records).contains(ENV_SECRET));
}

#[test]
fn nothing_is_sent_while_the_endpoint_is_unset_even_with_the_sdks_variables() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("received.jsonl");
    let (_collector, url) = collector(&out);
    let config = config(dir.path(), "");
    run(
        dir.path(),
        &config,
        "save a note called t3 saying hi",
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", url.as_str()),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                &format!("{url}/v1/traces"),
            ),
        ],
    );
    assert_eq!(received(&out), Vec::<Value>::new());
}

#[test]
fn a_collector_that_never_answers_costs_the_run_nothing_but_a_line_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    // Takes connections and reads nothing, answers nothing.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            held.push(conn);
        }
    });
    let config = config(dir.path(), &telemetry_section(&url, false));
    // The run ends as it would without telemetry (its flush gives up at the export timeout).
    run(
        dir.path(),
        &config,
        "save a note called t4 saying hi",
        &[("OTEL_TOKEN", OTEL_TOKEN)],
    );
    let log = std::fs::read_to_string(dir.path().join("aimon.log")).unwrap();
    assert!(log.contains("telemetry export failed"), "{log}");
    assert!(!log.contains(OTEL_TOKEN), "{log}");
}
