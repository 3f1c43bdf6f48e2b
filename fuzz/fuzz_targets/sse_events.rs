//! Fuzz target: the legacy SSE transport's reading of a server's event stream: our event
//! parser (`sse_events`), the `endpoint` event (which decides where our credentials are POSTed)
//! and the messages after it.
//!
//! Held: no panic; the endpoint, when taken, is on the SSE URL's origin; and the bytes cut into
//! chunks at arbitrary places read exactly as the same bytes in one piece.
#![no_main]

use aimon_console::mcp::transport::sse::{read_endpoint, read_message};
use aimon_console::sse::sse_events;
use futures::executor::block_on;
use libfuzzer_sys::fuzz_target;

/// What a stream read to its end came to: the endpoint (or why not), then every message.
#[derive(Debug, PartialEq)]
struct Reading {
    endpoint: Result<String, String>,
    messages: Vec<serde_json::Value>,
}

fn read(chunks: Vec<&[u8]>) -> Reading {
    let base = reqwest::Url::parse("http://127.0.0.1:3001/sse").expect("base URL");
    let stream = futures::stream::iter(chunks.into_iter().map(Ok::<_, std::convert::Infallible>));
    let mut events = Box::pin(sse_events(stream));
    block_on(async {
        let endpoint = match read_endpoint(&base, &mut events).await {
            Ok(url) => {
                assert_eq!(
                    url.origin(),
                    base.origin(),
                    "an endpoint off the SSE origin: {url}"
                );
                Ok(url.to_string())
            }
            Err(e) => Err(e.to_string()),
        };
        let mut messages = Vec::new();
        if endpoint.is_ok() {
            while let Some(m) = read_message(&mut events, "fuzz").await {
                messages.push(serde_json::to_value(&m).expect("a message serializes"));
            }
        }
        Reading { endpoint, messages }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut_seed, stream)) = data.split_first() else {
        return;
    };
    let whole = read(vec![stream]);
    // Cut every `step` bytes (1 to 16): CR/LF pairs, multi-byte characters and field names
    // straddle chunks.
    let step = usize::from(cut_seed % 16) + 1;
    let pieces = stream.chunks(step).collect();
    assert_eq!(read(pieces), whole);
});
