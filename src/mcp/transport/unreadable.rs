//! Lines that cannot be read as messages (over the line limit, invalid UTF-8, a response with
//! both `result` and `error`, JSON that is not JSON-RPC, broken JSON): what is wrong with each,
//! in words, and which request it answered, read from its first and last bytes without parsing
//! it whole (a bounded scan: the line may be 50 MB, or not valid JSON at all).
//!
//! Separate from the reader (`lines.rs`), which decides what to do with the answer found here.

use std::fmt;

use rmcp::model::RequestId;

/// Lines longer than this cannot be read: they are dropped and reported (rmcp's own limit,
/// `DEFAULT_MAX_LINE_LENGTH`). Here, with what makes a line unreadable, so that the reader
/// (`lines.rs`) and what reports on it (`issues.rs`) both take it from below.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Bytes of a line's start scanned for its top-level keys.
pub const HEAD_BYTES: usize = 64 * 1024;
/// Bytes of a line's end scanned for a trailing `"id"` (SDKs that write the id last).
pub const TAIL_BYTES: usize = 4 * 1024;

/// Why a line is not a message we can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Defect {
    /// Longer than the line limit; its length in bytes.
    TooLong(usize),
    /// Not UTF-8: the first bad byte's offset.
    BadUtf8(usize),
    /// A response with both `result` and `error`.
    ResultAndError,
    /// JSON, but not a JSON-RPC message (the parser's words).
    NotAMessage(String),
    /// Not even JSON (the parser's words).
    NotJson(String),
}

impl fmt::Display for Defect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Defect::TooLong(len) => write!(
                f,
                "{len} bytes, over the {} MiB line limit",
                MAX_LINE_BYTES / (1024 * 1024)
            ),
            Defect::BadUtf8(at) => write!(f, "invalid UTF-8 at byte {at}"),
            Defect::ResultAndError => write!(f, "both `result` and `error` in one response"),
            Defect::NotAMessage(why) => write!(
                f,
                "not a JSON-RPC message ({})",
                crate::text::sanitize_line(why, 200)
            ),
            Defect::NotJson(why) => write!(
                f,
                "not valid JSON ({})",
                crate::text::sanitize_line(why, 200)
            ),
        }
    }
}

/// The defect of a whole line that did not parse as a message: invalid UTF-8 first (it spoils
/// any parse), then both `result` and `error`, then the parser's own complaint.
pub fn defect_of(line: &[u8], envelope: &Envelope) -> Defect {
    if let Err(e) = std::str::from_utf8(line) {
        return Defect::BadUtf8(e.valid_up_to());
    }
    if envelope.result && envelope.error {
        return Defect::ResultAndError;
    }
    let trimmed = line.trim_ascii();
    match serde_json::from_slice::<serde::de::IgnoredAny>(trimmed) {
        Err(e) => Defect::NotJson(e.to_string()),
        Ok(_) => match serde_json::from_slice::<rmcp::model::ServerJsonRpcMessage>(trimmed) {
            Err(e) => Defect::NotAMessage(e.to_string()),
            Ok(_) => Defect::NotAMessage("a message this client does not take here".into()),
        },
    }
}

/// What the first and last bytes of a line say about it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// It opens a JSON object.
    pub object: bool,
    /// The top-level `id`, where one was found (a number or a string).
    pub id: Option<RequestId>,
    /// A top-level `method`: a request or a notification, not an answer.
    pub method: bool,
    /// Top-level `result` / `error` keys seen.
    pub result: bool,
    pub error: bool,
}

impl Envelope {
    /// Whether the line is (as far as can be seen) an answer to a request: an object with an
    /// id, a result or an error, and no method.
    pub fn is_answer(&self) -> bool {
        self.object && !self.method && (self.id.is_some() || self.result || self.error)
    }
}

/// Reads the top-level keys from `head` (a line's first bytes) and, when the head names no id,
/// a trailing `"id": …}` from `tail` (its last bytes). Never panics, whatever the bytes.
pub fn scan(head: &[u8], tail: &[u8]) -> Envelope {
    let mut envelope = Envelope::default();
    let mut s = Scanner { bytes: head, at: 0 };
    s.skip_ws();
    if s.peek() != Some(b'{') {
        return envelope;
    }
    envelope.object = true;
    s.at += 1;
    // Keys until the head runs out or the object closes; a value cut short ends the scan.
    loop {
        s.skip_ws();
        if s.peek() != Some(b'"') {
            break;
        }
        let Some(key) = s.string() else { break };
        s.skip_ws();
        if s.peek() != Some(b':') {
            break;
        }
        s.at += 1;
        s.skip_ws();
        // A key counts once seen, its value cut short or not; an id needs its whole value.
        match key {
            b"method" => envelope.method = true,
            b"result" => envelope.result = true,
            b"error" => envelope.error = true,
            _ => {}
        }
        let start = s.at;
        if !s.value() {
            break;
        }
        if key == b"id" {
            envelope.id = request_id(&head[start..s.at]);
        }
        s.skip_ws();
        if s.peek() != Some(b',') {
            break;
        }
        s.at += 1;
    }
    if envelope.id.is_none() && !envelope.method {
        envelope.id = trailing_id(tail);
    }
    envelope
}

/// An id read from a value's bytes: an integer or a string (anything else is no id).
fn request_id(value: &[u8]) -> Option<RequestId> {
    match value.first()? {
        b'"' | b'-' | b'0'..=b'9' => serde_json::from_slice(value).ok(),
        _ => None,
    }
}

/// `…, "id": <number or string> }` at the very end of `tail`: the last key of the top-level
/// object (the `}` that ends the line closes it). Read backwards.
fn trailing_id(tail: &[u8]) -> Option<RequestId> {
    let mut end = tail.trim_ascii_end();
    end = end.strip_suffix(b"}")?.trim_ascii_end();
    let start = match end.last()? {
        b'"' => {
            // The opening quote: the nearest `"` before it not escaped by an odd run of `\`.
            let body = &end[..end.len() - 1];
            let mut i = body.len();
            loop {
                let q = body[..i].iter().rposition(|b| *b == b'"')?;
                let slashes = body[..q].iter().rev().take_while(|b| **b == b'\\').count();
                if slashes % 2 == 0 {
                    break q;
                }
                i = q;
            }
        }
        b'0'..=b'9' => end
            .iter()
            .rposition(|b| !(b.is_ascii_digit() || *b == b'-'))
            .map_or(0, |i| i + 1),
        _ => return None,
    };
    let id = request_id(&end[start..])?;
    let before = end[..start].trim_ascii_end().strip_suffix(b":")?;
    let before = before.trim_ascii_end().strip_suffix(b"\"id\"")?;
    match before.trim_ascii_end().last()? {
        b',' | b'{' => Some(id),
        _ => None,
    }
}

/// A cursor over JSON bytes that skips values without building them.
struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    /// A string at the cursor (which is on its opening quote): its raw bytes between the
    /// quotes; `None` when the bytes end first.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.at + 1;
        let mut i = start;
        while i < self.bytes.len() {
            match self.bytes[i] {
                b'\\' => i += 2,
                b'"' => {
                    self.at = i + 1;
                    return Some(&self.bytes[start..i]);
                }
                _ => i += 1,
            }
        }
        None
    }

    /// Skips one value; false when the bytes end first (or it is not a value).
    fn value(&mut self) -> bool {
        match self.peek() {
            None => false,
            Some(b'"') => self.string().is_some(),
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                while let Some(b) = self.peek() {
                    match b {
                        b'"' => {
                            if self.string().is_none() {
                                return false;
                            }
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return true;
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
                false
            }
            Some(_) => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
                {
                    self.at += 1;
                }
                // A scalar that runs to the end of the bytes may have been cut short.
                self.at > start && self.at < self.bytes.len()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: i64) -> Option<RequestId> {
        Some(RequestId::Number(n))
    }

    #[test]
    fn the_head_gives_the_top_level_keys() {
        let e = scan(
            br#" {"jsonrpc":"2.0","id":7,"result":{"id":9,"x":[1,"]}"]}}"#,
            b"",
        );
        assert_eq!(
            (e.object, e.id, e.result, e.method),
            (true, id(7), true, false)
        );
        let e = scan(br#"{"jsonrpc":"2.0","id":"a\"b","error":{}}"#, b"");
        assert_eq!(e.id, Some(RequestId::String("a\"b".into())));
        assert!(e.error && e.is_answer());
        // A notification is not an answer, however large.
        let e = scan(
            br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"#,
            b"",
        );
        assert!(e.method && !e.is_answer());
        assert!(!scan(b"xxxxxxxx", b"").object);
        assert!(!scan(b"", b"").is_answer());
    }

    #[test]
    fn a_head_cut_short_keeps_what_it_saw_and_the_tail_gives_a_last_id() {
        // Cut inside the result: no id in the head, but a result, so an answer.
        let e = scan(
            br#"{"jsonrpc":"2.0","result":{"content":[{"text":"xxxx"#,
            b"",
        );
        assert!(e.result && e.id.is_none() && e.is_answer());
        // The TypeScript SDK writes the id last.
        let tail = br#"xxxx"}]},"jsonrpc":"2.0","id":12}"#;
        let e = scan(br#"{"result":{"content":[{"type":"text","text":"xx"#, tail);
        assert_eq!(e.id, id(12));
        let e = scan(br#"{"result":{"#, br#"xx"}}, "id" : "s-1" } "#);
        assert_eq!(e.id, Some(RequestId::String("s-1".into())));
        // An id cut short at the end of the head is no id.
        assert_eq!(scan(br#"{"id":12"#, b"").id, None);
    }

    #[test]
    fn a_nested_or_quoted_id_at_the_end_is_not_taken() {
        // The last `}` closes the top-level object, so an `"id"` right before it is top-level,
        // unless it is inside a string.
        assert_eq!(trailing_id(br#"{"x":"a,\"id\":5}"#), None);
        assert_eq!(trailing_id(br#"{"x":{"id":5}}"#), None);
        assert_eq!(trailing_id(br#"{"x":1,"id":5}"#), id(5));
        assert_eq!(trailing_id(br#"{"x":1,"id":-5}"#), id(-5));
        assert_eq!(
            trailing_id(br#"{"x":1,"id":"q\\"}"#),
            Some(RequestId::String("q\\".into()))
        );
        assert_eq!(trailing_id(br#"{"x":1,"id":null}"#), None);
        assert_eq!(trailing_id(br#"{"x":1,"id":1.5}"#), None);
    }

    #[test]
    fn defects_are_said_in_words() {
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"\xff\"}}";
        let e = scan(line, line);
        assert_eq!(e.id, id(1));
        assert_eq!(defect_of(line, &e), Defect::BadUtf8(39));
        assert_eq!(Defect::BadUtf8(39).to_string(), "invalid UTF-8 at byte 39");
        let both = br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#;
        assert_eq!(defect_of(both, &scan(both, both)), Defect::ResultAndError);
        let odd = br#"{"jsonrpc":"2.0","id":1,"result":5}"#;
        assert!(matches!(
            defect_of(odd, &scan(odd, odd)),
            Defect::NotAMessage(_)
        ));
        let broken = br#"{"jsonrpc":"2.0","id":1,"result":}"#;
        assert!(matches!(
            defect_of(broken, &scan(broken, broken)),
            Defect::NotJson(_)
        ));
        assert_eq!(
            Defect::TooLong(17_000_000).to_string(),
            "17000000 bytes, over the 16 MiB line limit"
        );
    }

    proptest::proptest! {
        #[test]
        fn scanning_never_panics(
            head in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
            tail in proptest::collection::vec(proptest::num::u8::ANY, 0..100),
        ) {
            let _ = scan(&head, &tail);
            let _ = defect_of(&head, &Envelope::default());
        }

        /// Wherever a real answer is cut, the id the scan finds is the answer's (or none).
        #[test]
        fn the_id_found_is_the_answers(id in 0i64..1_000_000, cut in 0usize..200, last in proptest::bool::ANY) {
            let body = serde_json::json!({"content": [{"type": "text", "text": "x".repeat(100), "id": 99}]});
            let line = if last {
                format!(r#"{{"jsonrpc":"2.0","result":{body},"id":{id}}}"#)
            } else {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{body}}}"#)
            };
            let bytes = line.as_bytes();
            let head = &bytes[..cut.min(bytes.len())];
            let tail = &bytes[bytes.len().saturating_sub(cut)..];
            let found = scan(head, tail).id;
            proptest::prop_assert!(found.is_none() || found == Some(RequestId::Number(id)));
        }
    }
}
