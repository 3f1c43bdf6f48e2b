//! The model client's limits and edges over a real socket, against a small in-test HTTP server
//! that says exactly what each case needs: `[DONE]` on a connection kept open, keep-alive
//! comments, a reset mid-answer, a body that trickles, secrets echoed across a cut, too many
//! or too long tool calls; and, through the loop, a huge reason and usage counts at `u64::MAX`.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aimon_console::agent::conversation::MAX_REASON_BYTES;
use aimon_console::agent::start::start_runtime;
use aimon_console::agent::stream::ModelReply;
use aimon_console::agent::turn::{FinishReason, History, Item, ToolChoice, ToolList};
use aimon_console::agent::{
    AgentEvent, Conversation, ConversationSettings, HttpModelClient, ModelClient, ModelError,
    ModelFailureClass, PromptOutcome,
};
use aimon_console::config::{ModelProfile, PolicyConfig};
use aimon_console::runtime::AgentRuntimeFactory;
use common::config_of;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// What the server does once it has read a request.
#[derive(Clone)]
enum Step {
    Write(Vec<u8>),
    Sleep(Duration),
    /// Close with a reset (SO_LINGER 0).
    Reset,
    /// Keep the connection open (the test ends first).
    Hold,
    /// Write these bytes again and again, as fast as the socket takes them, until it closes.
    Flood(Vec<u8>),
}

fn write(bytes: impl Into<Vec<u8>>) -> Step {
    Step::Write(bytes.into())
}

const SSE_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";

fn event(chunk: serde_json::Value) -> Step {
    write(format!("data: {chunk}\n\n"))
}

fn text_chunk(text: &str) -> serde_json::Value {
    json!({"choices": [{"delta": {"content": text}, "finish_reason": null}]})
}

fn finish_chunk(reason: &str) -> serde_json::Value {
    json!({"choices": [{"delta": {}, "finish_reason": reason}]})
}

/// A server on a loopback port answering its requests in turn with `scripts` (the last one
/// again for any further request); returns its base URL.
async fn serve(scripts: Vec<Vec<Step>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let scripts = Arc::new(Mutex::new(scripts));
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let scripts = scripts.clone();
            tokio::spawn(async move {
                let mut socket = socket;
                loop {
                    if !read_request(&mut socket).await {
                        return;
                    }
                    let script = {
                        let mut scripts = scripts.lock().unwrap();
                        if scripts.len() > 1 {
                            scripts.remove(0)
                        } else {
                            scripts[0].clone()
                        }
                    };
                    if !play(&mut socket, script).await {
                        return;
                    }
                }
            });
        }
    });
    format!("http://{address}/v1")
}

/// Reads one request (head and `content-length` body); false once the client went away.
async fn read_request(socket: &mut TcpStream) -> bool {
    let mut got = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let head_end = loop {
        if let Some(at) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&got[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while got.len() < head_end + length {
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    true
}

/// Plays `script`; true if the connection may take another request.
async fn play(socket: &mut TcpStream, script: Vec<Step>) -> bool {
    for step in script {
        match step {
            Step::Write(bytes) => {
                if socket.write_all(&bytes).await.is_err() {
                    return false;
                }
            }
            Step::Sleep(d) => tokio::time::sleep(d).await,
            Step::Reset => {
                // Deprecated for the wait on drop a linger can cause; a zero linger does not
                // wait, it resets, which is what this step is for.
                #[allow(deprecated)]
                let _ = socket.set_linger(Some(Duration::ZERO));
                return false;
            }
            Step::Hold => {
                tokio::time::sleep(Duration::from_secs(120)).await;
                return false;
            }
            Step::Flood(bytes) => {
                let many = bytes.repeat(1024);
                while socket.write_all(&many).await.is_ok() {}
                return false;
            }
        }
    }
    true
}

fn profile(url: &str, timeout: Duration, stream: bool) -> ModelProfile {
    let mut p = ModelProfile::url("test", url, "m");
    p.request_timeout = timeout;
    p.stream = stream;
    p
}

/// One request with `profile`, within a minute whatever happens.
async fn ask(profile: &ModelProfile) -> Result<ModelReply, ModelError> {
    let url = match &profile.endpoint {
        aimon_console::config::ModelEndpoint::Url(u) => u.clone(),
        aimon_console::config::ModelEndpoint::Command { .. } => unreachable!("url profiles"),
    };
    let client = HttpModelClient::new(profile, &url).expect("client");
    let prompt = History::new(None, vec![Item::User { text: "hi".into() }]);
    tokio::time::timeout(
        Duration::from_secs(60),
        client.complete(&prompt, &ToolList::default(), ToolChoice::Auto, &|_| {}),
    )
    .await
    .expect("the request ends within a minute")
}

#[tokio::test]
async fn done_completes_a_streamed_answer_on_a_connection_kept_open() {
    let url = serve(vec![vec![
        write(SSE_HEAD),
        event(text_chunk("all ")),
        event(text_chunk("there")),
        event(finish_chunk("stop")),
        write("data: [DONE]\n\n"),
        Step::Hold,
    ]])
    .await;
    let reply = ask(&profile(&url, Duration::from_secs(2), true))
        .await
        .expect("[DONE] completes the answer");
    assert_eq!(reply.text, "all there");
    assert_eq!(reply.finish_reason, Some(FinishReason::Stop));
}

#[tokio::test]
async fn keepalive_comments_reset_the_silence_timer_but_not_the_total() {
    let mut script = vec![write(SSE_HEAD), event(text_chunk("thinking… "))];
    for _ in 0..8 {
        script.push(Step::Sleep(Duration::from_millis(250)));
        script.push(write(": OPENROUTER PROCESSING\n\n"));
    }
    script.extend([
        event(text_chunk("done")),
        event(finish_chunk("stop")),
        write("data: [DONE]\n\n"),
    ]);
    let url = serve(vec![script]).await;
    // 2 s of comments, never 1 s of silence.
    let reply = ask(&profile(&url, Duration::from_secs(1), true))
        .await
        .expect("comments are not silence");
    assert_eq!(reply.text, "thinking… done");

    // Comments forever: the whole answer still gets 10 x request_timeout.
    let mut forever = vec![write(SSE_HEAD)];
    for _ in 0..400 {
        forever.push(Step::Sleep(Duration::from_millis(100)));
        forever.push(write(": OPENROUTER PROCESSING\n\n"));
    }
    // Comments as fast as the socket takes them: the next piece is always ready.
    let flood = vec![
        write(SSE_HEAD),
        Step::Flood(b": OPENROUTER PROCESSING\n\n".to_vec()),
    ];
    for script in [forever, flood] {
        let url = serve(vec![script]).await;
        let error = ask(&profile(&url, Duration::from_millis(400), true))
            .await
            .expect_err("the total cap");
        assert_eq!(error.class, ModelFailureClass::Timeout, "{error}");
        assert!(
            error.message.contains("longer than 10 x request_timeout"),
            "{error}"
        );
    }
}

#[tokio::test]
async fn a_reset_mid_answer_is_a_broken_stream_not_a_refused_connection() {
    let url = serve(vec![vec![
        write(SSE_HEAD),
        event(text_chunk("half an ans")),
        Step::Sleep(Duration::from_millis(100)),
        Step::Reset,
    ]])
    .await;
    let error = ask(&profile(&url, Duration::from_secs(5), true))
        .await
        .expect_err("reset");
    assert_eq!(error.class, ModelFailureClass::BadStream, "{error}");
    assert!(
        error
            .message
            .contains("broke before the answer was complete"),
        "{error}"
    );
    assert!(!error.hint.contains("start the model server"), "{error}");
}

#[tokio::test]
async fn a_whole_answer_that_trickles_gets_ten_timeouts_in_all() {
    let mut script = vec![write(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n",
    )];
    for _ in 0..2000 {
        script.push(write("{"));
        script.push(Step::Sleep(Duration::from_millis(50)));
    }
    let url = serve(vec![script]).await;
    let error = ask(&profile(&url, Duration::from_millis(300), false))
        .await
        .expect_err("the total cap");
    assert_eq!(error.class, ModelFailureClass::Timeout, "{error}");
    assert!(
        error
            .message
            .contains("answer took longer than 10 x request_timeout"),
        "{error}"
    );
}

#[tokio::test]
async fn secrets_are_scrubbed_before_an_echo_is_cut_short() {
    let key = "sk-live-0123456789abcdefghij";
    let header_secret = "azure-header-secret-value";
    // The key straddles the 300th character of the quoted message.
    let said = format!("{}{key} and {header_secret} are wrong", "x".repeat(290));
    let body = json!({"error": {"message": said}}).to_string();
    let url = serve(vec![vec![write(format!(
        "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    ))]])
    .await;
    let mut p = profile(&url, Duration::from_secs(5), true);
    p.api_key = Some(key.into());
    p.headers.insert("api-key".into(), header_secret.into());
    let error = ask(&p).await.expect_err("401");
    assert_eq!(error.class, ModelFailureClass::HttpStatus);
    assert!(!error.message.contains("sk-live"), "{error}");
    assert!(error.message.contains("<redacted"), "{error}");

    // A header secret echoed in a bad chunk, near the end of its 120-character quote.
    let chunk = format!("{{\"x\": \"{}{header_secret}", "y".repeat(105));
    let url = serve(vec![vec![
        write(SSE_HEAD),
        write(format!("data: {chunk}\n\n")),
    ]])
    .await;
    let mut p = profile(&url, Duration::from_secs(5), true);
    p.headers.insert("api-key".into(), header_secret.into());
    let error = ask(&p).await.expect_err("not JSON");
    assert!(error.message.contains("is not JSON"), "{error}");
    assert!(!error.message.contains("azure-h"), "{error}");
}

#[tokio::test]
async fn tool_calls_are_capped_in_number_and_in_name_size() {
    // A big text and 1500 calls without arguments.
    let mut script = vec![write(SSE_HEAD), event(text_chunk(&"t".repeat(256 * 1024)))];
    for i in 0..1500 {
        script.push(event(json!({"choices": [{"delta": {"tool_calls": [
            {"index": i, "id": format!("c{i}"), "function": {"name": "nope"}}
        ]}}]})));
    }
    script.extend([event(finish_chunk("tool_calls")), write("data: [DONE]\n\n")]);
    let url = serve(vec![script]).await;
    let error = ask(&profile(&url, Duration::from_secs(10), true))
        .await
        .expect_err("too many calls");
    assert_eq!(error.class, ModelFailureClass::BadStream, "{error}");
    assert!(
        error.message.contains("more than 128 tool calls"),
        "{error}"
    );

    // Two 600-byte names alternating at index 0: each within the 1 KiB limit, the name they
    // make together (names may come in pieces) over it.
    let a = "a".repeat(600);
    let b = "b".repeat(600);
    let mut script = vec![write(SSE_HEAD)];
    for i in 0..64 {
        let name = if i % 2 == 0 { &a } else { &b };
        script.push(event(json!({"choices": [{"delta": {"tool_calls": [
            {"index": 0, "function": {"name": name}}
        ]}}]})));
    }
    let url = serve(vec![script]).await;
    let error = ask(&profile(&url, Duration::from_secs(10), true))
        .await
        .expect_err("a name over the limit");
    assert_eq!(error.class, ModelFailureClass::BadStream, "{error}");
    assert!(
        error.message.contains("the name of tool call 0 is over"),
        "{error}"
    );
}

/// A conversation with the endpoint at `url` over a runtime without servers, and its events.
async fn no_servers_loop(
    url: &str,
    stream: bool,
) -> (
    Arc<aimon_console::runtime::AgentRuntime>,
    Conversation,
    tokio::sync::mpsc::UnboundedReceiver<AgentEvent>,
) {
    let (runtime_events, _stream) = AgentRuntimeFactory::events();
    let runtime = start_runtime(
        &config_of(Vec::new(), PolicyConfig::default()),
        runtime_events,
    )
    .await
    .expect("runtime");
    runtime.wait_started().await;
    let p = profile(url, Duration::from_secs(10), stream);
    let client = Arc::new(HttpModelClient::new(&p, url).expect("client"));
    let (tx, events) = tokio::sync::mpsc::unbounded_channel();
    let settings = ConversationSettings::new("test", 4);
    let conversation = Conversation::new(runtime.clone(), client, settings, Vec::new(), tx, None);
    (runtime, conversation, events)
}

#[tokio::test]
async fn the_loop_caps_each_reason_and_saturates_usage() {
    let text = "r".repeat(512 * 1024);
    let most =
        json!({"prompt_tokens": u64::MAX, "completion_tokens": u64::MAX, "total_tokens": u64::MAX});
    let calls = vec![
        write(SSE_HEAD),
        event(text_chunk(&text)),
        event(json!({"choices": [{"delta": {"tool_calls": [
            {"index": 0, "id": "c0", "function": {"name": "nope", "arguments": "{}"}},
            {"index": 1, "id": "c1", "function": {"name": "nope", "arguments": "{}"}}
        ]}}]})),
        event(finish_chunk("tool_calls")),
        event(json!({"choices": [], "usage": most})),
        write("data: [DONE]\n\n"),
    ];
    let answer = vec![
        write(SSE_HEAD),
        event(text_chunk("done")),
        event(finish_chunk("stop")),
        event(json!({"choices": [], "usage": most})),
        write("data: [DONE]\n\n"),
    ];
    let url = serve(vec![calls, answer]).await;
    let (runtime, mut conversation, mut events) = no_servers_loop(&url, true).await;
    let report = tokio::time::timeout(
        Duration::from_secs(60),
        conversation.prompt("go", CancellationToken::new()),
    )
    .await
    .expect("the prompt ends");
    assert_eq!(
        report.outcome,
        PromptOutcome::Answered {
            text: "done".into()
        }
    );
    assert_eq!(report.usage.input_tokens, u64::MAX);
    assert_eq!(report.usage.total(), u64::MAX);
    let mut reasons = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let AgentEvent::ToolCall { reason, .. } = event {
            reasons.push(reason);
        }
    }
    assert_eq!(reasons.len(), 2);
    for reason in &reasons {
        assert!(reason.len() <= MAX_REASON_BYTES, "{}", reason.len());
        assert!(reason.starts_with("rrrr") && reason.ends_with('…'));
    }
    // The whole text is still the model's message, once.
    assert!(matches!(
        &conversation.items()[1],
        Item::Assistant { text: said, .. } if said.len() == text.len()
    ));
    runtime.close().await;
}

/// A reply that did not stream reaches the drivers whole, as one text piece, however long: its
/// calls' reasons are cut, its text is not.
#[tokio::test]
async fn a_whole_reply_reaches_the_drivers_whole() {
    let text = "w".repeat(5000);
    let json_answer = |body: serde_json::Value| {
        let body = body.to_string();
        write(format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        ))
    };
    let calls = vec![json_answer(
        json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": text, "tool_calls": [
            {"id": "c0", "type": "function", "function": {"name": "nope", "arguments": "{}"}}
        ]}}]}),
    )];
    let answer = vec![json_answer(
        json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "done"}}]}),
    )];
    let url = serve(vec![calls, answer]).await;
    let (runtime, mut conversation, mut events) = no_servers_loop(&url, false).await;
    let report = conversation.prompt("go", CancellationToken::new()).await;
    assert!(
        matches!(report.outcome, PromptOutcome::Answered { .. }),
        "{report:?}"
    );
    let mut texts = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let AgentEvent::TextDelta { turn, text } = event {
            texts.push((turn, text));
        }
    }
    assert_eq!(texts, vec![(1, text), (2, "done".to_string())]);
    runtime.close().await;
}
