//! Model endpoint faults over a real socket, for each provider against `demo-model --wire …`:
//! each fault flag gives its failure class and hint, within `request_timeout` (plus the bounded
//! retry waits, where there are retries); a 429 with `Retry-After: 1` is retried and succeeds
//! (and Anthropic's 529 `overloaded_error` like it); TLS and DNS failures are named as such.

mod common;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use aimon_console::agent::turn::{FinishReason, History, Item, ToolChoice, ToolList, ToolSpec};
use aimon_console::agent::{
    HttpModelClient, ModelClient, ModelError, ModelEvent, ModelFailureClass,
};
use aimon_console::config::{ModelProfile, ModelProvider};
use common::{demo_model, free_port};
use serde_json::json;

const TIMEOUT: Duration = Duration::from_secs(2);

/// Every provider, with the demo model's `--wire` that speaks it.
const WIRES: [(ModelProvider, &str); 3] = [
    (ModelProvider::OpenAiChat, "chat"),
    (ModelProvider::Anthropic, "anthropic"),
    (ModelProvider::OpenAiResponses, "responses"),
];

/// The demo model speaking `wire`, with `flags`.
fn model(wire: &str, flags: &[&str]) -> (common::Background, String) {
    let mut all = vec!["--wire", wire];
    all.extend_from_slice(flags);
    demo_model(&all)
}

fn profile_for(provider: ModelProvider, base_url: &str, stream: bool) -> ModelProfile {
    let mut p = ModelProfile::url("test", base_url, "demo");
    p.request_timeout = TIMEOUT;
    p.stream = stream;
    p.provider = provider;
    p
}

fn profile(base_url: &str, stream: bool) -> ModelProfile {
    profile_for(ModelProvider::OpenAiChat, base_url, stream)
}

fn prompt() -> History {
    History::new(
        None,
        vec![Item::User {
            text: "what is 2 plus 3".into(),
        }],
    )
}

fn tools() -> ToolList {
    ToolList::new(vec![ToolSpec {
        name: "mcp__notes__add".into(),
        description: "Add two numbers.".into(),
        parameters: json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}),
    }])
}

/// One request to `base_url`: its result, the events seen, and how long it took.
async fn ask(
    profile: ModelProfile,
) -> (
    Result<aimon_console::agent::stream::ModelReply, ModelError>,
    Vec<ModelEvent>,
    Duration,
) {
    let client = HttpModelClient::new(
        &profile,
        match &profile.endpoint {
            aimon_console::config::ModelEndpoint::Url(u) => u,
            aimon_console::config::ModelEndpoint::Command { .. } => {
                unreachable!("url profiles only")
            }
        },
    )
    .expect("client");
    let seen = Mutex::new(Vec::new());
    let started = Instant::now();
    let result = client
        .complete(&prompt(), &tools(), ToolChoice::Auto, &|e| {
            seen.lock().unwrap().push(e)
        })
        .await;
    (result, seen.into_inner().unwrap(), started.elapsed())
}

async fn fault(
    (provider, wire): (ModelProvider, &str),
    flags: &[&str],
    stream: bool,
) -> (ModelError, Duration) {
    let (_model, url) = model(wire, flags);
    let (result, _, elapsed) = ask(profile_for(provider, &url, stream)).await;
    (result.expect_err("a failure"), elapsed)
}

#[tokio::test]
async fn every_fault_of_chat_completions_has_its_class_and_hint_within_the_timeout() {
    fault_matrix(WIRES[0]).await;
}

#[tokio::test]
async fn every_fault_of_the_messages_api_has_its_class_and_hint_within_the_timeout() {
    fault_matrix(WIRES[1]).await;
    // Anthropic's overloaded_error (529) is retried like a 429.
    let (error, _) = fault(WIRES[1], &["--status", "529"], true).await;
    assert_eq!(error.class, ModelFailureClass::ServerError, "{error}");
    assert!(error.message.contains("HTTP 529"), "{error}");
    assert!(error.hint.contains("after 3 retries"), "{error}");
}

#[tokio::test]
async fn every_fault_of_the_responses_api_has_its_class_and_hint_within_the_timeout() {
    fault_matrix(WIRES[2]).await;
}

/// The matrix of faults, for one provider against the demo model speaking its wire.
async fn fault_matrix(wire: (ModelProvider, &str)) {
    // (flags, stream, class, in the message, in the hint, longest wait besides the timeout)
    type Case<'a> = (
        &'a [&'a str],
        bool,
        ModelFailureClass,
        &'a str,
        &'a str,
        u64,
    );
    let cases: &[Case] = &[
        (
            &["--hang"],
            true,
            ModelFailureClass::Timeout,
            "within request_timeout (2.0s)",
            "request_timeout",
            0,
        ),
        (
            &["--hang"],
            false,
            ModelFailureClass::Timeout,
            "within request_timeout",
            "request_timeout",
            0,
        ),
        (
            &["--status", "401"],
            true,
            ModelFailureClass::HttpStatus,
            "HTTP 401",
            "api_key",
            0,
        ),
        (
            &["--api-key", "right"],
            true,
            ModelFailureClass::HttpStatus,
            "HTTP 401: Incorrect API key provided",
            "api_key",
            0,
        ),
        (
            &["--status", "404"],
            true,
            ModelFailureClass::HttpStatus,
            "HTTP 404",
            "base_url",
            0,
        ),
        (
            &["--status", "400"],
            false,
            ModelFailureClass::HttpStatus,
            "HTTP 400",
            "read its message",
            0,
        ),
        (
            &["--status", "429", "--retry-after", "0"],
            true,
            ModelFailureClass::RateLimited,
            "HTTP 429",
            "rate-limiting",
            0,
        ),
        (
            &["--status", "429", "--retry-after", "3600"],
            true,
            ModelFailureClass::RateLimited,
            "HTTP 429",
            "asks to wait 60m00s",
            0,
        ),
        // Backoff 0.5 + 1 + 2 s.
        (
            &["--status", "503"],
            true,
            ModelFailureClass::ServerError,
            "HTTP 503",
            "after 3 retries",
            4,
        ),
        (
            &["--empty-stream"],
            true,
            ModelFailureClass::BadStream,
            "empty stream",
            "stream: false",
            0,
        ),
        (
            &["--malformed-chunk"],
            true,
            ModelFailureClass::BadStream,
            "is not JSON",
            "stream: false",
            0,
        ),
        (
            &["--cut-stream"],
            true,
            ModelFailureClass::BadStream,
            "before the answer was complete",
            "try again",
            0,
        ),
        // A stream that ends cleanly before its end event.
        (
            &["--unfinished-stream"],
            true,
            ModelFailureClass::BadStream,
            "the stream stopped before its finish reason",
            "try again",
            0,
        ),
        // Bytes that drip inside an event that never ends are no progress: the stream is
        // stalled after request_timeout, not after 10 x request_timeout of dripping.
        (
            &["--drip-stream"],
            true,
            ModelFailureClass::Timeout,
            "completed no event of the stream within request_timeout (2.0s)",
            "request_timeout",
            0,
        ),
    ];
    for (flags, stream, class, message, hint, retry_wait) in cases {
        let (error, elapsed) = fault(wire, flags, *stream).await;
        let what = format!("{}: {flags:?}", wire.1);
        assert_eq!(error.class, *class, "{what}: {error}");
        assert!(error.message.contains(message), "{what}: {error}");
        assert!(error.hint.contains(hint), "{what}: {error}");
        // Within request_timeout (and the retries' waits) and a second: a drip included.
        assert!(
            elapsed < TIMEOUT + Duration::from_secs(*retry_wait) + Duration::from_secs(1),
            "{what} took {elapsed:?}"
        );
    }
    // Nothing listening.
    let url = format!("http://127.0.0.1:{}/v1", free_port());
    let (result, _, _) = ask(profile_for(wire.0, &url, true)).await;
    let error = result.expect_err("refused");
    assert_eq!(error.class, ModelFailureClass::ConnectRefused, "{error}");
    assert!(error.hint.contains("start the model server"), "{error}");
}

#[tokio::test]
async fn tls_and_dns_failures_are_named_on_both_ways_to_the_endpoint() {
    // `https://` to a server that speaks plain HTTP: the handshake fails (reqwest, rustls).
    let (_model, url) = demo_model(&[]);
    let (result, _, elapsed) = ask(profile(&url.replacen("http://", "https://", 1), true)).await;
    let error = result.expect_err("not TLS");
    assert_eq!(error.class, ModelFailureClass::TlsError, "{error}");
    assert!(error.message.contains("TLS handshake with"), "{error}");
    assert!(error.hint.contains("certificate"), "{error}");
    assert!(elapsed < TIMEOUT, "took {elapsed:?}");
    // A host name that does not resolve (RFC 6761 keeps `.invalid` for that), on the plain
    // HTTP way (hyper) and the https one (reqwest).
    for url in ["http://nowhere.invalid:9/v1", "https://nowhere.invalid/v1"] {
        let (result, _, _) = ask(profile(url, true)).await;
        let error = result.expect_err("no such host");
        assert_eq!(error.class, ModelFailureClass::DnsError, "{url}: {error}");
        assert!(
            error
                .message
                .contains("cannot resolve host nowhere.invalid"),
            "{url}: {error}"
        );
        assert!(
            error.hint.contains("host name in base_url"),
            "{url}: {error}"
        );
    }
}

#[tokio::test]
async fn a_429_with_retry_after_1_is_retried_and_succeeds_with_a_countdown() {
    for wire in WIRES {
        retried(wire).await;
    }
}

async fn retried((provider, wire): (ModelProvider, &str)) {
    let (_model, url) = model(
        wire,
        &["--status", "429", "--retry-after", "1", "--times", "1"],
    );
    let (result, events, elapsed) = ask(profile_for(provider, &url, true)).await;
    let reply = result.expect("the retry succeeds");
    assert_eq!(reply.tool_calls[0].name, "mcp__notes__add");
    let retry = events
        .iter()
        .find_map(|e| match e {
            ModelEvent::Retrying {
                attempt,
                delay,
                error,
                ..
            } => Some((*attempt, *delay, error.class)),
            _ => None,
        })
        .expect("a retry event");
    assert_eq!(
        retry,
        (1, Duration::from_secs(1), ModelFailureClass::RateLimited)
    );
    assert!(elapsed >= Duration::from_secs(1), "{elapsed:?}");
    // 5xx: bounded backoff, then the answer.
    let (_model, url) = model(wire, &["--status", "502", "--times", "2"]);
    let (result, events, _) = ask(profile_for(provider, &url, false)).await;
    assert!(result.is_ok(), "{result:?}");
    let delays: Vec<Duration> = events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::Retrying { delay, .. } => Some(*delay),
            _ => None,
        })
        .collect();
    assert_eq!(
        delays,
        vec![Duration::from_millis(500), Duration::from_secs(1)]
    );
}

#[tokio::test]
async fn streamed_and_whole_answers_read_the_same() {
    for (provider, wire) in WIRES {
        for reasoning in [false, true] {
            let flags: &[&str] = if reasoning { &["--reasoning"] } else { &[] };
            if reasoning && provider == ModelProvider::OpenAiChat {
                continue;
            }
            let (_model, url) = model(wire, flags);
            let (streamed, events, _) = ask(profile_for(provider, &url, true)).await;
            let (whole, _, _) = ask(profile_for(provider, &url, false)).await;
            let (streamed, whole) = (streamed.expect("streamed"), whole.expect("whole"));
            // The same answer (the usage counts the request, which says whether to stream).
            assert_eq!(
                (&streamed.text, &streamed.tool_calls, &streamed.reasoning),
                (&whole.text, &whole.tool_calls, &whole.reasoning),
                "{wire}"
            );
            assert_eq!(streamed.tool_calls[0].arguments, "{\"a\":2,\"b\":3}");
            assert_eq!(streamed.finish_reason, Some(FinishReason::ToolCalls));
            assert!(streamed.usage.is_some_and(|u| u.total() > 0));
            assert_eq!(streamed.reasoning.len(), usize::from(reasoning), "{wire}");
            assert!(events.len() > 3, "{wire}: text came in pieces: {events:?}");
        }
    }
}

/// An answer longer than `max_tokens` is cut there, as a model cuts it, with the finish reason
/// `length`, streamed or not.
#[tokio::test]
async fn an_answer_past_max_tokens_ends_with_finish_reason_length() {
    for (provider, wire) in WIRES {
        let (_model, url) = model(wire, &[]);
        for stream in [false, true] {
            let mut p = profile_for(provider, &url, stream);
            p.max_tokens = Some(4);
            let (reply, _, _) = ask(p).await;
            let reply = reply.expect("an answer");
            assert_eq!(reply.finish_reason, Some(FinishReason::Length), "{reply:?}");
            assert!(reply.text.len() <= 16, "{reply:?}");
            assert!(reply.tool_calls.is_empty(), "{reply:?}");
            let mut p = profile_for(provider, &url, stream);
            p.max_tokens = Some(4096);
            let (reply, _, _) = ask(p).await;
            assert_ne!(
                reply.expect("an answer").finish_reason,
                Some(FinishReason::Length)
            );
        }
    }
}

/// `run` against an endpoint whose stream drips bytes inside an event that never completes
/// ends `timeout` within `request_timeout` and a second of its model turn's start, for each
/// provider's stream (the time read off `run --json`'s lines as they come).
#[test]
fn run_ends_a_dripping_stream_as_timeout_within_the_request_timeout_for_each_provider() {
    use std::io::BufRead;
    for (provider, wire) in WIRES {
        let (_model, url) = model(wire, &["--drip-stream"]);
        let config = common::write_config(&format!(
            "agent:\n  base_url: {url}\n  provider: {}\n  model: demo\n  request_timeout: 2s\n",
            provider.as_str()
        ));
        let state = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new(common::bin())
            .arg("--config")
            .arg(&config.path)
            .args(["run", "what is 2 plus 3", "--json"])
            .env("XDG_STATE_HOME", state.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("run");
        let stdout = child.stdout.take().expect("stdout");
        let (mut started, mut stopped) = (None, None);
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.expect("a line");
            let event: serde_json::Value = serde_json::from_str(&line).expect("JSON");
            match event["type"].as_str() {
                Some("turn_started") => started = Some(Instant::now()),
                Some("stopped") => {
                    stopped = Some(Instant::now());
                    assert_eq!(event["error"]["class"], "timeout", "{wire}: {line}");
                    assert!(
                        event["error"]["message"]
                            .as_str()
                            .is_some_and(|m| m.contains("completed no event of the stream")),
                        "{wire}: {line}"
                    );
                }
                _ => {}
            }
        }
        assert_eq!(child.wait().expect("exit").code(), Some(1), "{wire}");
        let (started, stopped) = (
            started.unwrap_or_else(|| panic!("{wire}: no turn started")),
            stopped.unwrap_or_else(|| panic!("{wire}: no stopped event")),
        );
        let took = stopped - started;
        assert!(
            took < TIMEOUT + Duration::from_secs(1),
            "{wire}: run took {took:?} to end the dripping stream"
        );
    }
}
