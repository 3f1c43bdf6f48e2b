//! Putting an answer together: the chunks of a streamed answer (text deltas, tool-call pieces
//! joined by index, the finish reason, usage), or a whole answer, into one [`ModelReply`].
//!
//! Separate from the HTTP client so that what counts as a broken stream (empty, a chunk that is
//! not JSON, no finish reason) is decided on bytes alone, and tested without a socket.

use std::collections::BTreeMap;

use super::failure::{ModelError, ModelFailureClass, Secrets};
use super::wire::{arguments_text, Chunk, Completion, ToolCall, Usage};

/// The most bytes one answer may hold: its text, and its tool calls' names, ids and arguments,
/// each call counted [`CALL_ENTRY_BYTES`] more.
pub const MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// The most tool calls one answer may ask for: a model that asks for more is looping, and
/// each call is copied into the conversation, its events and the transcript.
pub const MAX_TOOL_CALLS: usize = 128;

/// The longest tool-call name, and the longest tool-call id (bytes).
pub const MAX_CALL_NAME_BYTES: usize = 1024;

/// What a tool call costs against [`MAX_REPLY_BYTES`] besides its name, id and arguments.
pub const CALL_ENTRY_BYTES: usize = 64;

/// A model's answer to one request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelReply {
    /// The text it wrote (before and besides its tool calls).
    pub text: String,
    /// The tools it asked to call, in index order.
    pub tool_calls: Vec<ToolCall>,
    /// `stop`, `tool_calls`, `length`, … as the endpoint said.
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
}

/// The finish reason of an answer cut at `max_tokens`.
pub const CUT_AT_TOKEN_LIMIT: &str = "length";

/// What arrived so far, reported while a streamed answer comes in.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamPiece {
    /// More text.
    Text(String),
    /// Tool call `index` was named (its first piece).
    ToolCall { index: usize, name: String },
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Joins the chunks of one streamed answer.
#[derive(Debug, Default)]
pub struct Assembler {
    text: String,
    calls: BTreeMap<usize, PartialCall>,
    /// The call the last piece went to: a piece without an index continues it.
    last_call: Option<usize>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    chunks: usize,
    done: bool,
    bytes: usize,
    /// Scrubbed from a bad chunk before it is quoted.
    secrets: Secrets,
}

impl Assembler {
    /// An assembler whose errors never quote `secrets`.
    pub fn new(secrets: Secrets) -> Self {
        Assembler {
            secrets,
            ..Assembler::default()
        }
    }

    /// `[DONE]` came: the answer is complete, whether or not the connection stays open.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Reads the data of one event: a JSON chunk, or `[DONE]`.
    pub fn feed(
        &mut self,
        data: &str,
        mut on_piece: impl FnMut(StreamPiece),
    ) -> Result<(), ModelError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            ModelError::new(
                ModelFailureClass::BadStream,
                format!(
                    "chunk {} of the stream is not JSON ({e}): {}",
                    self.chunks + 1,
                    self.secrets.quote(data.as_bytes(), 120)
                ),
            )
            .with_hint("the endpoint is not OpenAI-compatible or sent a broken chunk; try again, or set stream: false for this profile")
        })?;
        self.chunks += 1;
        if let Some(error) = chunk.error {
            return Err(ModelError::new(
                ModelFailureClass::BadStream,
                format!(
                    "the endpoint reported an error in the stream: {}",
                    super::failure::endpoint_message(
                        &serde_json::json!({"error": error}).to_string(),
                        &self.secrets
                    )
                ),
            )
            .with_hint("read the endpoint's message; try again"));
        }
        if chunk.usage.is_some() {
            self.usage = chunk.usage;
        }
        let Some(choice) = chunk.choices.into_iter().next() else {
            return Ok(());
        };
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.grow(text.len())?;
                self.text.push_str(&text);
                on_piece(StreamPiece::Text(text));
            }
            for (position, piece) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
                let index = self.index_of(piece.index, piece.id.as_deref(), position)?;
                self.last_call = Some(index);
                let call = self.calls.entry(index).or_default();
                let mut grown = 0;
                if let Some(id) = piece.id.filter(|id| !id.is_empty() && *id != call.id) {
                    check_name_len("id", index, id.len())?;
                    grown += id.len();
                    call.id = id;
                }
                let (name, arguments) = match piece.function {
                    Some(f) => (f.name, f.arguments),
                    None => (None, None),
                };
                let mut named = None;
                if let Some(name) = name.filter(|n| !n.is_empty()) {
                    // Most servers name a call in its first piece only; some repeat the name,
                    // and some send it in pieces.
                    if call.name.is_empty() {
                        check_name_len("name", index, name.len())?;
                        grown += name.len();
                        call.name = name.clone();
                        named = Some(name);
                    } else if call.name != name {
                        check_name_len("name", index, call.name.len() + name.len())?;
                        grown += name.len();
                        call.name.push_str(&name);
                    }
                }
                if let Some(arguments) = arguments {
                    let text = arguments_text(arguments);
                    grown += text.len();
                    call.arguments.push_str(&text);
                }
                self.grow(grown)?;
                if let Some(name) = named {
                    on_piece(StreamPiece::ToolCall { index, name });
                }
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.finish_reason = Some(reason);
        }
        Ok(())
    }

    /// The call a piece goes to. The standard gives every piece an `index`; without one (some
    /// servers send each call whole, one to a chunk or several to a chunk, without it) a piece
    /// with an id the last call does not have starts a new call, as does a piece after the
    /// first of its chunk that does not carry the last call's id; any other piece continues
    /// the last call. A new call past [`MAX_TOOL_CALLS`] is an error.
    fn index_of(
        &mut self,
        index: Option<usize>,
        id: Option<&str>,
        position: usize,
    ) -> Result<usize, ModelError> {
        let index = match (index, self.last_call) {
            (Some(index), _) => index,
            (None, None) => 0,
            (None, Some(last)) => {
                let last_id = self.calls.get(&last).map_or("", |c| c.id.as_str());
                let id = id.filter(|id| !id.is_empty());
                let new = match id {
                    Some(id) => !last_id.is_empty() && id != last_id,
                    None => false,
                } || (position > 0 && id.is_none_or(|id| id != last_id));
                if new {
                    self.calls
                        .keys()
                        .next_back()
                        .map_or(0, |k| k.saturating_add(1))
                } else {
                    last
                }
            }
        };
        if !self.calls.contains_key(&index) {
            if self.calls.len() >= MAX_TOOL_CALLS {
                return Err(too_many_calls(ModelFailureClass::BadStream));
            }
            self.grow(CALL_ENTRY_BYTES)?;
        }
        Ok(index)
    }

    fn grow(&mut self, by: usize) -> Result<(), ModelError> {
        self.bytes = self.bytes.saturating_add(by);
        if self.bytes > MAX_REPLY_BYTES {
            return Err(ModelError::new(
                ModelFailureClass::BadStream,
                format!("the answer is over {} MiB", MAX_REPLY_BYTES / (1024 * 1024)),
            )
            .with_hint("set max_tokens for this profile"));
        }
        Ok(())
    }

    /// The answer, once the stream has ended: an empty stream, or one that stopped before its
    /// finish reason (and without `[DONE]`), is a `bad_stream`.
    pub fn finish(self) -> Result<ModelReply, ModelError> {
        if self.chunks == 0 {
            let what = if self.done {
                "only [DONE]"
            } else {
                "no events at all"
            };
            return Err(ModelError::new(
                ModelFailureClass::BadStream,
                format!("the endpoint answered 200 with an empty stream ({what})"),
            )
            .with_hint("some servers (llama.cpp's, with tools) cannot stream an answer: set stream: false for this profile"));
        }
        if self.finish_reason.is_none() && !self.done {
            return Err(ModelError::new(
                ModelFailureClass::BadStream,
                format!(
                    "the stream stopped before its finish reason (after {} chunks)",
                    self.chunks
                ),
            )
            .with_hint(
                "the model server may have crashed, or a proxy cut the connection; try again",
            ));
        }
        Ok(ModelReply {
            text: self.text,
            tool_calls: calls(
                self.calls
                    .into_values()
                    .map(|c| (c.id, c.name, c.arguments)),
            ),
            finish_reason: self.finish_reason,
            usage: self.usage,
        })
    }
}

/// More tool calls than one answer may hold.
fn too_many_calls(class: ModelFailureClass) -> ModelError {
    ModelError::new(
        class,
        format!("the answer asks for more than {MAX_TOOL_CALLS} tool calls"),
    )
    .with_hint("the model is looping on tool calls: try again, or ask for less at a time")
}

/// A tool call's name or id over [`MAX_CALL_NAME_BYTES`] is an error (no tool is named so).
fn check_name_len(what: &str, index: usize, len: usize) -> Result<(), ModelError> {
    if len > MAX_CALL_NAME_BYTES {
        return Err(ModelError::new(
            ModelFailureClass::BadStream,
            format!("the {what} of tool call {index} is over {MAX_CALL_NAME_BYTES} bytes"),
        )
        .with_hint("the endpoint sent a broken tool call; try again"));
    }
    Ok(())
}

/// Tool calls with an id each (`call_N` where the server gave none).
fn calls(parts: impl Iterator<Item = (String, String, String)>) -> Vec<ToolCall> {
    parts
        .enumerate()
        .map(|(i, (id, name, arguments))| ToolCall {
            id: if id.is_empty() {
                format!("call_{i}")
            } else {
                id
            },
            name,
            arguments,
        })
        .collect()
}

/// A whole answer (`stream: false`, or a server that ignored `stream: true`); an error
/// quotes its start, `secrets` scrubbed. Its tool calls are held to the limits of a streamed
/// answer's.
pub fn whole(body: &[u8], secrets: &Secrets) -> Result<ModelReply, ModelError> {
    let bad = |why: String| {
        ModelError::new(
            ModelFailureClass::BadResponse,
            format!(
                "the answer is not a chat completion ({why}): {}",
                secrets.quote(body, 120)
            ),
        )
    };
    let completion: Completion = serde_json::from_slice(body).map_err(|e| bad(e.to_string()))?;
    let Some(choice) = completion.choices.into_iter().next() else {
        return Err(bad("no choices".into()));
    };
    let message = choice.message.ok_or_else(|| bad("no message".into()))?;
    let tool_calls = message.tool_calls.unwrap_or_default();
    if tool_calls.len() > MAX_TOOL_CALLS {
        return Err(too_many_calls(ModelFailureClass::BadResponse));
    }
    for (index, call) in tool_calls.iter().enumerate() {
        for (what, len) in [("name", call.name.len()), ("id", call.id.len())] {
            check_name_len(what, index, len)
                .map_err(|e| ModelError::new(ModelFailureClass::BadResponse, e.message))?;
        }
    }
    Ok(ModelReply {
        text: message.content.unwrap_or_default(),
        tool_calls: calls(tool_calls.into_iter().map(|c| (c.id, c.name, c.arguments))),
        finish_reason: choice.finish_reason,
        usage: completion.usage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feed_all(chunks: &[String]) -> (Result<ModelReply, ModelError>, Vec<StreamPiece>) {
        let mut assembler = Assembler::default();
        let mut pieces = Vec::new();
        for chunk in chunks {
            if let Err(e) = assembler.feed(chunk, |p| pieces.push(p)) {
                return (Err(e), pieces);
            }
        }
        (assembler.finish(), pieces)
    }

    fn delta(v: serde_json::Value) -> String {
        json!({"choices": [{"delta": v, "finish_reason": null}]}).to_string()
    }

    #[test]
    fn text_and_parallel_tool_calls_are_joined_by_index() {
        let chunks = vec![
            delta(json!({"role": "assistant", "content": "Saving "})),
            delta(json!({"content": "it."})),
            delta(json!({"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "mcp__n__write_note", "arguments": "{\"ti"}}]})),
            delta(json!({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "mcp__n__add", "arguments": ""}}]})),
            delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "tle\":\"t\"}"}}]})),
            delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": "{\"a\":1,\"b\":2}"}}]})),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}).to_string(),
            json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).to_string(),
            "[DONE]".to_string(),
        ];
        let (reply, pieces) = feed_all(&chunks);
        let reply = reply.expect("a reply");
        assert_eq!(reply.text, "Saving it.");
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(reply.usage.map(|u| u.total_tokens), Some(15));
        let calls: Vec<(&str, &str, &str)> = reply
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("a", "mcp__n__write_note", "{\"title\":\"t\"}"),
                ("b", "mcp__n__add", "{\"a\":1,\"b\":2}")
            ]
        );
        assert_eq!(
            pieces,
            vec![
                StreamPiece::Text("Saving ".into()),
                StreamPiece::Text("it.".into()),
                StreamPiece::ToolCall {
                    index: 0,
                    name: "mcp__n__write_note".into()
                },
                StreamPiece::ToolCall {
                    index: 1,
                    name: "mcp__n__add".into()
                },
            ]
        );
    }

    #[test]
    fn broken_streams_are_bad_streams_that_say_how() {
        let (empty, _) = feed_all(&[]);
        let empty = empty.expect_err("empty");
        assert_eq!(empty.class, ModelFailureClass::BadStream);
        assert!(empty.message.contains("empty stream"), "{}", empty.message);
        assert!(empty.hint.contains("stream: false"), "{}", empty.hint);

        let (cut, _) = feed_all(&[delta(json!({"content": "hal"}))]);
        let cut = cut.expect_err("cut");
        assert!(
            cut.message.contains("before its finish reason"),
            "{}",
            cut.message
        );

        let (bad, _) = feed_all(&[delta(json!({"content": "a"})), "{\"choices\": [".into()]);
        let bad = bad.expect_err("malformed");
        assert_eq!(bad.class, ModelFailureClass::BadStream);
        assert!(
            bad.message.starts_with("chunk 2 of the stream is not JSON"),
            "{}",
            bad.message
        );

        // [DONE] without a finish reason is a complete answer.
        let (done, _) = feed_all(&[delta(json!({"content": "ok"})), "[DONE]".into()]);
        assert_eq!(done.expect("done").text, "ok");
    }

    #[test]
    fn a_whole_answer_reads_its_calls_and_usage() {
        let body = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{"id": "", "type": "function", "function": {"name": "x", "arguments": "{}"}}]}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}});
        let none = Secrets::default();
        let reply = whole(body.to_string().as_bytes(), &none).expect("reply");
        assert_eq!(reply.text, "");
        assert_eq!(reply.tool_calls[0].id, "call_0");
        assert_eq!(reply.usage.map(|u| u.completion_tokens), Some(2));
        let err = whole(b"<html>", &none).expect_err("not json");
        assert_eq!(err.class, ModelFailureClass::BadResponse);
    }

    #[test]
    fn names_and_ids_count_and_are_bounded() {
        // Two long names alternating at index 0 used to double the name with every chunk.
        let a = "a".repeat(600);
        let b = "b".repeat(600);
        let chunks: Vec<String> = (0..20)
            .map(|i| {
                let name = if i % 2 == 0 { &a } else { &b };
                delta(json!({"tool_calls": [{"index": 0, "function": {"name": name}}]}))
            })
            .collect();
        let err = feed_all(&chunks).0.expect_err("a name over the limit");
        assert_eq!(err.class, ModelFailureClass::BadStream);
        assert!(
            err.message
                .contains("the name of tool call 0 is over 1024 bytes"),
            "{}",
            err.message
        );
        let long_id = "i".repeat(MAX_CALL_NAME_BYTES + 1);
        let err = feed_all(&[delta(
            json!({"tool_calls": [{"index": 0, "id": long_id, "function": {"name": "x"}}]}),
        )])
        .0
        .expect_err("an id over the limit");
        assert!(
            err.message.contains("the id of tool call 0 is over"),
            "{}",
            err.message
        );
        // Calls with nothing but an index cost their entry: they are capped in number.
        let many: Vec<String> = (0..=MAX_TOOL_CALLS)
            .map(|i| delta(json!({"tool_calls": [{"index": i}]})))
            .collect();
        let err = feed_all(&many).0.expect_err("too many calls");
        assert!(
            err.message.contains("more than 128 tool calls"),
            "{}",
            err.message
        );
        let mut assembler = Assembler::default();
        for chunk in &many[..MAX_TOOL_CALLS] {
            assembler.feed(chunk, |_| {}).expect("within the limit");
        }
        assert_eq!(assembler.bytes, MAX_TOOL_CALLS * CALL_ENTRY_BYTES);
    }

    #[test]
    fn calls_without_an_index_are_told_apart_by_their_ids() {
        // One whole call to a chunk, no index: two calls, not one merged.
        let chunks = vec![
            delta(
                json!({"tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{\"a\":1}"}}]}),
            ),
            delta(
                json!({"tool_calls": [{"id": "c2", "function": {"name": "g", "arguments": "{}"}}]}),
            ),
            // A piece without an index or id continues the last call.
            delta(json!({"tool_calls": [{"function": {"arguments": " "}}]})),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}).to_string(),
        ];
        let reply = feed_all(&chunks).0.expect("a reply");
        let calls: Vec<(&str, &str, &str)> = reply
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(calls, vec![("c1", "f", "{\"a\":1}"), ("c2", "g", "{} ")]);
        // Two whole calls in one chunk with neither index nor id: two calls, by position.
        let chunks = vec![
            delta(json!({"tool_calls": [
                {"function": {"name": "a", "arguments": "{}"}},
                {"function": {"name": "b", "arguments": "{\"x\":1}"}}
            ]})),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}).to_string(),
        ];
        let reply = feed_all(&chunks).0.expect("a reply");
        let calls: Vec<(&str, &str)> = reply
            .tool_calls
            .iter()
            .map(|c| (c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(calls, vec![("a", "{}"), ("b", "{\"x\":1}")]);
    }

    #[test]
    fn done_completes_the_answer() {
        let mut assembler = Assembler::default();
        assembler
            .feed(&delta(json!({"content": "ok"})), |_| {})
            .unwrap();
        assert!(!assembler.is_done());
        assembler.feed("[DONE]", |_| {}).unwrap();
        assert!(assembler.is_done());
    }

    #[test]
    fn a_whole_answer_is_held_to_the_same_limits() {
        let calls: Vec<_> = (0..=MAX_TOOL_CALLS)
            .map(|i| json!({"id": format!("c{i}"), "type": "function", "function": {"name": "nope", "arguments": ""}}))
            .collect();
        let body = json!({"choices": [{"message": {"role": "assistant", "content": "x", "tool_calls": calls}, "finish_reason": "tool_calls"}]});
        let err = whole(body.to_string().as_bytes(), &Secrets::default()).expect_err("too many");
        assert_eq!(err.class, ModelFailureClass::BadResponse);
        assert!(err.message.contains("more than 128"), "{}", err.message);
    }
}
