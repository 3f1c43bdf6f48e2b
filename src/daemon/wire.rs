//! The operator API's messages: JSON-RPC 2.0, one message a line (docs/daemon.md). A line is
//! at most [`MAX_LINE`] bytes; what a console sends is read by [`parse`], which takes any bytes
//! and gives a request, a notification or the JSON-RPC error to answer with.

use serde_json::{json, Value};

/// The protocol version this daemon speaks (`initialize`'s `protocol_version`).
pub const PROTOCOL_VERSION: u64 = 1;
/// The longest line a console may send. (The daemon's own may be longer: an event carries a
/// tool's whole result; a console reads lines of any length.)
pub const MAX_LINE: usize = 1 << 20;

/// JSON-RPC's own error codes, and the API's.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    /// Over TCP, an `initialize` without the daemon's token (the connection then ends).
    pub const UNAUTHORIZED: i64 = -32001;
    /// A request before `initialize`, or a second `initialize`.
    pub const NOT_INITIALIZED: i64 = -32002;
    /// `initialize` with a protocol version this daemon does not speak.
    pub const UNSUPPORTED_VERSION: i64 = -32003;
    /// `approve` of an approval (or `answer_elicitation` of a question, `answer_sampling` of
    /// a sampling request) another console answered first.
    pub const ALREADY_ANSWERED: i64 = -32010;
    /// `approve` of no approval that is waiting.
    pub const NO_SUCH_APPROVAL: i64 = -32011;
    /// A name (tool, server) the daemon does not know.
    pub const NOT_FOUND: i64 = -32012;
    /// The daemon's config file was not written (changed on disk since, or unwritable).
    pub const NOT_WRITTEN: i64 = -32013;
    /// `answer_elicitation` of no server's question that is waiting (or `sample`,
    /// `answer_sampling` of no sampling request).
    pub const NO_SUCH_QUESTION: i64 = -32014;
    /// A server's resources, skills or prompts could not be had (not ready, not offered, its
    /// answer an error: the message says which).
    pub const CONTENT_FAILED: i64 = -32015;
    /// `sample`: the daemon's model could not answer (no `agent:`, its endpoint did not
    /// start, the request failed: the message says which, with the hint).
    pub const MODEL_FAILED: i64 = -32016;
    /// `restart`: the daemon's config file does not load now (the message says where: file,
    /// line and column); nothing was restarted.
    pub const CONFIG_INVALID: i64 = -32017;
}

/// One message a console sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming {
    /// `None` for a notification (no answer is sent).
    pub id: Option<Value>,
    pub method: String,
    pub params: Value,
}

/// Why a line is not a message, with the id to answer under (`null` when it could not be read).
#[derive(Debug, Clone, PartialEq)]
pub struct WireError {
    pub id: Value,
    pub code: i64,
    pub message: String,
}

impl WireError {
    /// The error response line.
    pub fn response(&self) -> String {
        error_response(&self.id, self.code, &self.message)
    }
}

/// Reads one line (without its newline) as a JSON-RPC request or notification.
pub fn parse(line: &[u8]) -> Result<Incoming, WireError> {
    let fail = |id: Value, code, message: String| WireError { id, code, message };
    if line.len() > MAX_LINE {
        return Err(fail(
            Value::Null,
            code::INVALID_REQUEST,
            format!("a message is at most {MAX_LINE} bytes"),
        ));
    }
    let value: Value = serde_json::from_slice(line)
        .map_err(|e| fail(Value::Null, code::PARSE_ERROR, format!("not JSON: {e}")))?;
    let Value::Object(mut map) = value else {
        return Err(fail(
            Value::Null,
            code::INVALID_REQUEST,
            "a message is a JSON object (batches are not taken)".into(),
        ));
    };
    let id = match map.remove("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id),
        Some(_) => {
            return Err(fail(
                Value::Null,
                code::INVALID_REQUEST,
                "`id` is a string or a number".into(),
            ))
        }
    };
    let answer_id = id.clone().unwrap_or(Value::Null);
    if map.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(fail(
            answer_id,
            code::INVALID_REQUEST,
            "`jsonrpc` must be \"2.0\"".into(),
        ));
    }
    let method = match map.remove("method") {
        Some(Value::String(m)) if !m.is_empty() => m,
        _ => {
            return Err(fail(
                answer_id,
                code::INVALID_REQUEST,
                "`method` is a non-empty string".into(),
            ))
        }
    };
    let params = match map.remove("params") {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(params @ Value::Object(_)) => params,
        Some(_) => {
            return Err(fail(
                answer_id,
                code::INVALID_PARAMS,
                "`params` is an object".into(),
            ))
        }
    };
    Ok(Incoming { id, method, params })
}

/// One line cut from what a console sent, or the mark of one that was too long (its bytes
/// were skipped up to its newline; the next line is read as usual).
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Line(Vec<u8>),
    TooLong,
}

/// Cuts a byte stream into lines of at most [`MAX_LINE`] bytes, holding at most that much.
#[derive(Debug, Default)]
pub struct Framer {
    line: Vec<u8>,
    /// Inside a line already over the limit: dropping bytes until its newline.
    skipping: bool,
}

impl Framer {
    /// Takes `chunk`; each line it completes goes to `frame`, in order.
    pub fn feed(&mut self, mut chunk: &[u8], frame: &mut impl FnMut(Frame)) {
        while !chunk.is_empty() {
            let end = chunk.iter().position(|b| *b == b'\n');
            let (part, rest) = match end {
                Some(i) => (&chunk[..i], Some(&chunk[i + 1..])),
                None => (chunk, None),
            };
            if !self.skipping {
                if self.line.len() + part.len() > MAX_LINE {
                    self.skipping = true;
                    self.line = Vec::new();
                    frame(Frame::TooLong);
                } else {
                    self.line.extend_from_slice(part);
                }
            }
            match rest {
                Some(rest) => {
                    if !self.skipping {
                        frame(Frame::Line(std::mem::take(&mut self.line)));
                    }
                    self.skipping = false;
                    chunk = rest;
                }
                None => break,
            }
        }
    }
}

/// A result response line.
pub fn result_response(id: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

/// An error response line.
pub fn error_response(id: &Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// A notification line.
pub fn notification(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_notifications_and_what_is_neither() {
        let ok = parse(br#"{"jsonrpc":"2.0","id":7,"method":"approve","params":{"id":3}}"#);
        assert_eq!(
            ok,
            Ok(Incoming {
                id: Some(json!(7)),
                method: "approve".into(),
                params: json!({"id": 3}),
            })
        );
        let note = parse(br#"{"jsonrpc":"2.0","method":"ping"}"#).unwrap();
        assert_eq!((note.id, note.params), (None, json!({})));
        let cases: [(&[u8], i64, Value); 6] = [
            (b"{nope", code::PARSE_ERROR, Value::Null),
            (b"[1]", code::INVALID_REQUEST, Value::Null),
            (
                br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#,
                code::INVALID_REQUEST,
                Value::Null,
            ),
            (br#"{"id":1,"method":"x"}"#, code::INVALID_REQUEST, json!(1)),
            (
                br#"{"jsonrpc":"2.0","id":"a","method":""}"#,
                code::INVALID_REQUEST,
                json!("a"),
            ),
            (
                br#"{"jsonrpc":"2.0","id":2,"method":"x","params":[1]}"#,
                code::INVALID_PARAMS,
                json!(2),
            ),
        ];
        for (line, want, id) in cases {
            let err = parse(line).unwrap_err();
            assert_eq!(
                (err.code, err.id),
                (want, id),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        let long = vec![b' '; MAX_LINE + 1];
        assert_eq!(parse(&long).unwrap_err().code, code::INVALID_REQUEST);
    }

    #[test]
    fn lines_are_cut_across_chunks_and_a_long_one_is_skipped_whole() {
        let mut framer = Framer::default();
        let mut frames = Vec::new();
        let mut take = |f: Frame| frames.push(f);
        framer.feed(b"ab", &mut take);
        framer.feed(b"c\nd", &mut take);
        framer.feed(&vec![b'x'; MAX_LINE], &mut take);
        framer.feed(b"yy\nok\n\n", &mut take);
        assert_eq!(
            frames,
            [
                Frame::Line(b"abc".to_vec()),
                Frame::TooLong,
                Frame::Line(b"ok".to_vec()),
                Frame::Line(Vec::new()),
            ]
        );
    }
}
