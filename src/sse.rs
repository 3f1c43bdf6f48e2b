//! Server-sent events, read as the WHATWG HTML standard says a client reads them ("Interpreting
//! an event stream"), for the legacy SSE transport and the model client's streamed answers.
//!
//! At the bottom layer (like `text.rs`) because two layers read event streams: the MCP legacy
//! SSE transport and the agent's OpenAI-compatible client; neither may import the other.
//!
//! Ours rather than the `sse-stream` crate's: that parser ends the stream at the first line it
//! does not like (a line without a colon, a second `event:` line, bytes that are not UTF-8),
//! where the standard says to ignore or repair it, and whether events before such a line are
//! seen depends on how the bytes were cut into packets (the `sse_events` fuzz target found it).
//! One misbehaving line must not end a server's connection. Bounded: an event, or a line,
//! longer than the limit ends the stream instead of growing without end.

use std::collections::VecDeque;

use futures::{Stream, StreamExt};

/// The most bytes one event (or one line) may hold: 16 MiB, the stdio frame limit.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The event type; `message` when the server named none.
    pub event: String,
    pub data: String,
}

/// The stream had an event or a line over [`MAX_EVENT_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an event over the {} MiB limit", MAX_EVENT_BYTES / (1024 * 1024))]
pub struct TooLarge;

/// An incremental parser: feed it bytes as they arrive, in any pieces; events come out as they
/// complete. An event not ended by a blank line when the stream ends is not dispatched.
#[derive(Debug)]
pub struct SseParser {
    max: usize,
    line: Vec<u8>,
    /// The last byte fed was a CR: an LF right after it ends no second line.
    after_cr: bool,
    /// No byte seen yet: a leading byte order mark is dropped.
    at_start: bool,
    data: String,
    event: String,
    /// The last event ID buffer: the last `id` field's value, kept across events.
    last_id: String,
    /// The reconnection time the stream asked for (`retry`), in milliseconds.
    retry: Option<u64>,
    /// Events ended, and comment lines read between events: what a stream that makes progress
    /// completes (bytes dripping inside an event complete none).
    completed: u64,
}

impl Default for SseParser {
    fn default() -> Self {
        SseParser::with_limit(MAX_EVENT_BYTES)
    }
}

impl SseParser {
    pub fn with_limit(max: usize) -> Self {
        SseParser {
            max,
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            data: String::new(),
            event: String::new(),
            last_id: String::new(),
            retry: None,
            completed: 0,
        }
    }

    /// The last event ID the stream set (`id`), to resume it with `Last-Event-ID`; `None`
    /// while it has set none (or set it empty).
    pub fn last_event_id(&self) -> Option<&str> {
        Some(self.last_id.as_str()).filter(|id| !id.is_empty())
    }

    /// A parser for the stream that resumes this one: what it had of an unfinished event is
    /// dropped, its last event ID and reconnection time are kept (as a reconnecting
    /// `EventSource` keeps them).
    pub fn resumed(&self) -> SseParser {
        SseParser {
            last_id: self.last_id.clone(),
            retry: self.retry,
            ..SseParser::with_limit(self.max)
        }
    }

    /// The reconnection time the stream asked for (`retry`), if it did.
    pub fn retry(&self) -> Option<std::time::Duration> {
        self.retry.map(std::time::Duration::from_millis)
    }

    /// How many events ended, and comment lines (keep-alives) came between events, so far.
    pub fn completed(&self) -> u64 {
        self.completed
    }

    /// Parses `bytes`, appending the events they complete to `out`.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut VecDeque<SseEvent>) -> Result<(), TooLarge> {
        while let Some((&first, rest)) = bytes.split_first() {
            if self.after_cr && first == b'\n' {
                bytes = rest;
            }
            self.after_cr = false;
            match bytes.iter().position(|b| *b == b'\n' || *b == b'\r') {
                Some(end) => {
                    self.push(&bytes[..end])?;
                    self.after_cr = bytes[end] == b'\r';
                    self.end_line(out)?;
                    bytes = &bytes[end + 1..];
                }
                None => {
                    self.push(bytes)?;
                    bytes = &[];
                }
            }
        }
        Ok(())
    }

    fn push(&mut self, piece: &[u8]) -> Result<(), TooLarge> {
        if self.line.len() + piece.len() > self.max {
            return Err(TooLarge);
        }
        self.line.extend_from_slice(piece);
        Ok(())
    }

    fn end_line(&mut self, out: &mut VecDeque<SseEvent>) -> Result<(), TooLarge> {
        let mut line = std::mem::take(&mut self.line);
        if std::mem::take(&mut self.at_start) && line.starts_with(b"\xEF\xBB\xBF") {
            line.drain(..3);
        }
        let result = self.interpret(&line, out);
        line.clear();
        self.line = line;
        result
    }

    fn interpret(&mut self, line: &[u8], out: &mut VecDeque<SseEvent>) -> Result<(), TooLarge> {
        if line.is_empty() {
            self.completed += 1;
            self.dispatch(out);
            return Ok(());
        }
        if line[0] == b':' {
            if self.data.is_empty() && self.event.is_empty() {
                self.completed += 1;
            }
            return Ok(());
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                if self.data.len() + value.len() + 1 > self.max {
                    return Err(TooLarge);
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.data.push('\n');
            }
            // Kept for a reader that resumes the stream (the legacy transport does not).
            b"id" if !value.contains(&0) => {
                self.last_id = String::from_utf8_lossy(value).into_owned();
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            // Other fields are ignored, as the standard says.
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut VecDeque<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        if self.data.is_empty() {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        out.push_back(SseEvent {
            event: if event.is_empty() {
                "message".into()
            } else {
                event
            },
            data,
        });
    }
}

/// Why an event stream ended early.
#[derive(Debug, thiserror::Error)]
pub enum SseStreamError<E> {
    #[error(transparent)]
    TooLarge(TooLarge),
    #[error("{0}")]
    Body(E),
}

/// The events of a body that arrives as a stream of byte chunks.
pub fn sse_events<S, B, E>(body: S) -> impl Stream<Item = Result<SseEvent, SseStreamError<E>>>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
{
    struct State<S, E> {
        body: S,
        parser: SseParser,
        ready: VecDeque<SseEvent>,
        failure: Option<SseStreamError<E>>,
        ended: bool,
    }
    let state = State {
        body,
        parser: SseParser::default(),
        ready: VecDeque::new(),
        failure: None,
        ended: false,
    };
    // Events completed before a failure still come out, then the failure, then the end.
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.ready.pop_front() {
                return Some((Ok(event), state));
            }
            if let Some(failure) = state.failure.take() {
                return Some((Err(failure), state));
            }
            if state.ended {
                return None;
            }
            match state.body.next().await {
                None => state.ended = true,
                Some(Ok(chunk)) => {
                    if let Err(e) = state.parser.feed(chunk.as_ref(), &mut state.ready) {
                        state.failure = Some(SseStreamError::TooLarge(e));
                        state.ended = true;
                    }
                }
                Some(Err(e)) => {
                    state.failure = Some(SseStreamError::Body(e));
                    state.ended = true;
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &[u8]) -> Vec<(String, String)> {
        let mut parser = SseParser::default();
        let mut out = VecDeque::new();
        parser.feed(text, &mut out).unwrap();
        out.into_iter().map(|e| (e.event, e.data)).collect()
    }

    fn ev(event: &str, data: &str) -> (String, String) {
        (event.to_string(), data.to_string())
    }

    #[test]
    fn reads_the_standards_examples() {
        // Multi-line data joined with LF; comments and unknown fields ignored.
        assert_eq!(
            parse(b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"),
            vec![ev("message", "first event"), ev("message", "second event"), ev("message", " third event")]
        );
        assert_eq!(
            parse(b"data: YHOO\ndata: +2\ndata: 10\n\n"),
            vec![ev("message", "YHOO\n+2\n10")]
        );
        // `data` alone is an empty value; an event not ended by a blank line is not dispatched.
        assert_eq!(
            parse(b"data\n\ndata\ndata\n\ndata:"),
            vec![ev("message", ""), ev("message", "\n")]
        );
        assert_eq!(
            parse(b"data:test\n\ndata: test\n\n"),
            vec![ev("message", "test"); 2]
        );
    }

    #[test]
    fn takes_every_line_ending_a_bom_and_repairs_what_the_strict_parser_refused() {
        assert_eq!(
            parse(b"\xEF\xBB\xBFevent: endpoint\r\ndata: /m\r\rdata: a\rdata: b\n\n"),
            vec![ev("endpoint", "/m"), ev("message", "a\nb")]
        );
        // No colon, a second event line, bytes that are not UTF-8: ignored, last one wins,
        // replaced; the stream goes on.
        assert_eq!(
            parse(b"garbage line\nevent: a\nevent: b\ndata: \xff\n\ndata: after\n\n"),
            vec![ev("b", "\u{fffd}"), ev("message", "after")]
        );
        // The event type does not carry over to the next event; a blank event is not dispatched.
        assert_eq!(parse(b"event: x\n\ndata: y\n\n"), vec![ev("message", "y")]);
    }

    #[test]
    fn pieces_read_as_the_whole() {
        let text: &[u8] = b"event: endpoint\r\ndata: /m\r\n\r\n: c\rdata: {\"a\":\r\ndata: 1}\n\n";
        let whole = parse(text);
        for step in 1..text.len() {
            let mut parser = SseParser::default();
            let mut out = VecDeque::new();
            for piece in text.chunks(step) {
                parser.feed(piece, &mut out).unwrap();
            }
            let got: Vec<_> = out.into_iter().map(|e| (e.event, e.data)).collect();
            assert_eq!(got, whole, "step {step}");
        }
    }

    #[test]
    fn a_line_or_an_event_over_the_limit_ends_the_stream() {
        let mut out = VecDeque::new();
        assert_eq!(
            SseParser::with_limit(8).feed(b"data: 123456789", &mut out),
            Err(TooLarge)
        );
        let mut parser = SseParser::with_limit(8);
        assert_eq!(
            parser.feed(b"data: 1234\ndata: 1234\n", &mut out),
            Err(TooLarge)
        );
        assert!(out.is_empty());
    }

    #[test]
    fn the_last_event_id_and_the_retry_time_are_kept_across_events() {
        let mut parser = SseParser::default();
        let mut out = VecDeque::new();
        parser
            .feed(b"id: 7\nretry: 250\ndata:\n\n", &mut out)
            .unwrap();
        // A priming event (an id and an empty data field) sets the id; its data is empty.
        assert_eq!(out.pop_front().map(|e| e.data), Some(String::new()));
        assert_eq!(parser.last_event_id(), Some("7"));
        assert_eq!(parser.retry(), Some(std::time::Duration::from_millis(250)));
        parser
            .feed(b"data: a\n\nretry: soon\nid: 8\0\n", &mut out)
            .unwrap();
        assert_eq!(out.len(), 1);
        // A retry that is not all digits, and an id holding NUL, are ignored.
        assert_eq!(parser.retry(), Some(std::time::Duration::from_millis(250)));
        assert_eq!(parser.last_event_id(), Some("7"));
        parser.feed(b"id\n\n", &mut out).unwrap();
        assert_eq!(parser.last_event_id(), None, "an empty id resets it");
    }

    #[tokio::test]
    async fn a_body_stream_gives_its_events_then_its_failure() {
        let chunks = futures::stream::iter([
            Ok::<_, &str>(b"data: a\n\nda".to_vec()),
            Ok(b"ta: b\n\n".to_vec()),
            Err("reset"),
            Ok(b"data: c\n\n".to_vec()),
        ]);
        let got: Vec<_> = sse_events(chunks).collect().await;
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].as_ref().unwrap().data, "a");
        assert_eq!(got[1].as_ref().unwrap().data, "b");
        assert!(matches!(got[2], Err(SseStreamError::Body("reset"))));
    }

    #[test]
    fn only_ended_events_and_comments_between_events_count_as_completed() {
        let mut parser = SseParser::default();
        let mut out = VecDeque::new();
        let mut feed = |bytes: &[u8]| {
            parser.feed(bytes, &mut out).unwrap();
            parser.completed()
        };
        // Bytes dripping inside an event, its lines too, complete nothing.
        assert_eq!(feed(b"data: {\"choi"), 0);
        assert_eq!(feed(b"ces\"\ndata: x\n: a comment inside the event\n"), 0);
        assert_eq!(feed(b"\n"), 1);
        // A keep-alive comment between events counts; so does every event's end.
        assert_eq!(feed(b": keep-alive\n"), 2);
        assert_eq!(feed(b"data: a\n\ndata: b\n\n"), 4);
    }
}
