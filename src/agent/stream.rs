//! Putting an answer together, whichever provider's wire it came in: text, reasoning, tool
//! calls (joined by index), the finish reason and usage, into one [`ModelReply`], held to the
//! same limits for every provider. Each provider's reader (`providers/`) turns its stream's
//! events, or its whole answer, into calls on a [`ReplyBuilder`].
//!
//! Separate from the HTTP client so that what counts as a broken answer (too large, too many
//! calls, a name too long) is decided on data alone, and tested without a socket.

use std::collections::BTreeMap;

use super::failure::{ModelError, ModelFailureClass};
use super::turn::{FinishReason, Reasoning, ToolCall, Usage};

/// The most bytes one answer may hold: its text, reasoning, and its tool calls' names, ids and
/// arguments, each call counted [`CALL_ENTRY_BYTES`] more.
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
    /// Its reasoning, to be sent back with the answer.
    pub reasoning: Vec<Reasoning>,
    /// The tools it asked to call, in index order.
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<FinishReason>,
    pub usage: Option<Usage>,
}

/// What arrived so far, reported while a streamed answer comes in.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamPiece {
    /// More text.
    Text(String),
    /// Tool call `index` was named (its first piece).
    ToolCall { index: usize, name: String },
}

/// A provider's reader of one streamed answer: fed each server-sent event, it says when the
/// answer is complete and what it was.
pub trait StreamReader: Send {
    /// Reads one event (`event`: its `event:` name, `message` when it had none).
    fn feed(
        &mut self,
        event: &str,
        data: &str,
        on_piece: &mut dyn FnMut(StreamPiece),
    ) -> Result<(), ModelError>;

    /// The answer's end came: it is complete, whether or not the connection stays open.
    fn is_done(&self) -> bool;

    /// The answer, once the stream has ended (or is done).
    fn finish(self: Box<Self>) -> Result<ModelReply, ModelError>;
}

/// A tool call as its pieces arrive.
#[derive(Debug, Default)]
pub struct PartialCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// An answer being put together, within the limits.
#[derive(Debug, Default)]
pub struct ReplyBuilder {
    text: String,
    reasoning: Vec<Reasoning>,
    calls: BTreeMap<usize, PartialCall>,
    pub finish_reason: Option<FinishReason>,
    pub usage: Option<Usage>,
    bytes: usize,
    /// How the error class of a broken answer reads: `bad_stream` while streaming,
    /// `bad_response` for a whole answer.
    class: Option<ModelFailureClass>,
}

impl ReplyBuilder {
    /// A builder for a streamed answer (`streamed`) or a whole one: its errors' class.
    pub fn new(streamed: bool) -> Self {
        ReplyBuilder {
            class: Some(if streamed {
                ModelFailureClass::BadStream
            } else {
                ModelFailureClass::BadResponse
            }),
            ..ReplyBuilder::default()
        }
    }

    fn class(&self) -> ModelFailureClass {
        self.class.unwrap_or(ModelFailureClass::BadStream)
    }

    /// More text (reported as a piece).
    pub fn text(
        &mut self,
        text: String,
        on_piece: &mut dyn FnMut(StreamPiece),
    ) -> Result<(), ModelError> {
        if text.is_empty() {
            return Ok(());
        }
        self.grow(text.len())?;
        self.text.push_str(&text);
        on_piece(StreamPiece::Text(text));
        Ok(())
    }

    /// A piece of reasoning.
    pub fn reasoning(&mut self, reasoning: Reasoning) -> Result<(), ModelError> {
        self.grow(reasoning.text.len() + reasoning.state.to_string().len())?;
        self.reasoning.push(reasoning);
        Ok(())
    }

    /// Whether call `index` has begun.
    pub fn has_call(&self, index: usize) -> bool {
        self.calls.contains_key(&index)
    }

    /// The id of call `index` so far (empty when none).
    pub fn call_id(&self, index: usize) -> &str {
        self.calls.get(&index).map_or("", |c| c.id.as_str())
    }

    /// The index after the last call's.
    pub fn next_index(&self) -> usize {
        self.calls
            .keys()
            .next_back()
            .map_or(0, |k| k.saturating_add(1))
    }

    /// Adds to call `index` (begun if new): its id (a new one replaces it), its name (the first
    /// one names it, a different later one is appended: some servers send it in pieces), more
    /// of its arguments. Naming it is reported as a piece.
    pub fn call(
        &mut self,
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: Option<&str>,
        on_piece: &mut dyn FnMut(StreamPiece),
    ) -> Result<(), ModelError> {
        if !self.calls.contains_key(&index) {
            if self.calls.len() >= MAX_TOOL_CALLS {
                return Err(too_many_calls(self.class()));
            }
            self.grow(CALL_ENTRY_BYTES)?;
        }
        let class = self.class();
        let call = self.calls.entry(index).or_default();
        let mut grown = 0;
        if let Some(id) = id.filter(|id| !id.is_empty() && *id != call.id) {
            check_name_len(class, "id", index, id.len())?;
            grown += id.len();
            call.id = id;
        }
        let mut named = None;
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            if call.name.is_empty() {
                check_name_len(class, "name", index, name.len())?;
                grown += name.len();
                call.name = name.clone();
                named = Some(name);
            } else if call.name != name {
                check_name_len(class, "name", index, call.name.len() + name.len())?;
                grown += name.len();
                call.name.push_str(&name);
            }
        }
        if let Some(arguments) = arguments {
            grown += arguments.len();
            call.arguments.push_str(arguments);
        }
        self.grow(grown)?;
        if let Some(name) = named {
            on_piece(StreamPiece::ToolCall { index, name });
        }
        Ok(())
    }

    /// Replaces call `index`'s arguments (a provider that gives them whole at the call's end).
    pub fn set_arguments(&mut self, index: usize, arguments: String) -> Result<(), ModelError> {
        let Some(call) = self.calls.get_mut(&index) else {
            return Ok(());
        };
        let old = std::mem::replace(&mut call.arguments, arguments);
        let new = self.calls[&index].arguments.len();
        self.bytes = self.bytes.saturating_sub(old.len());
        self.grow(new)
    }

    fn grow(&mut self, by: usize) -> Result<(), ModelError> {
        self.bytes = self.bytes.saturating_add(by);
        if self.bytes > MAX_REPLY_BYTES {
            return Err(ModelError::new(
                self.class(),
                format!("the answer is over {} MiB", MAX_REPLY_BYTES / (1024 * 1024)),
            )
            .with_hint("set max_tokens for this profile"));
        }
        Ok(())
    }

    /// Whether anything at all came.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.calls.is_empty() && self.reasoning.is_empty()
    }

    /// The answer: its calls in index order, each with an id (`call_N` where the server gave
    /// none).
    pub fn build(self) -> ModelReply {
        ModelReply {
            text: self.text,
            reasoning: self.reasoning,
            tool_calls: self
                .calls
                .into_values()
                .enumerate()
                .map(|(i, c)| ToolCall {
                    id: if c.id.is_empty() {
                        format!("call_{i}")
                    } else {
                        c.id
                    },
                    name: c.name,
                    arguments: c.arguments,
                })
                .collect(),
            finish_reason: self.finish_reason,
            usage: self.usage,
        }
    }
}

/// More tool calls than one answer may hold.
pub fn too_many_calls(class: ModelFailureClass) -> ModelError {
    ModelError::new(
        class,
        format!("the answer asks for more than {MAX_TOOL_CALLS} tool calls"),
    )
    .with_hint("the model is looping on tool calls: try again, or ask for less at a time")
}

/// A tool call's name or id over [`MAX_CALL_NAME_BYTES`] is an error (no tool is named so).
fn check_name_len(
    class: ModelFailureClass,
    what: &str,
    index: usize,
    len: usize,
) -> Result<(), ModelError> {
    if len > MAX_CALL_NAME_BYTES {
        return Err(ModelError::new(
            class,
            format!("the {what} of tool call {index} is over {MAX_CALL_NAME_BYTES} bytes"),
        )
        .with_hint("the endpoint sent a broken tool call; try again"));
    }
    Ok(())
}

/// A stream that ended with nothing in it (`what`: how it ended).
pub fn empty_stream(what: &str) -> ModelError {
    ModelError::new(
        ModelFailureClass::BadStream,
        format!("the endpoint answered 200 with an empty stream ({what})"),
    )
    .with_hint("some servers (llama.cpp's, with tools) cannot stream an answer: set stream: false for this profile")
}

/// A stream that stopped before its end, after `events` events.
pub fn cut_stream(events: usize) -> ModelError {
    ModelError::new(
        ModelFailureClass::BadStream,
        format!("the stream stopped before its finish reason (after {events} chunks)"),
    )
    .with_hint("the model server may have crashed, or a proxy cut the connection; try again")
}

/// Event `n` of a stream that is not what its provider sends (`why`, and its start quoted).
pub fn bad_event(n: usize, why: &str, quoted: &str) -> ModelError {
    ModelError::new(
        ModelFailureClass::BadStream,
        format!("chunk {n} of the stream is not JSON ({why}): {quoted}"),
    )
    .with_hint("the endpoint does not speak this profile's provider or sent a broken chunk; try again, or set stream: false (or another provider:) for this profile")
}

/// The endpoint reported a failure inside the stream (`message`, already scrubbed).
pub fn error_in_stream(message: &str) -> ModelError {
    ModelError::new(
        ModelFailureClass::BadStream,
        format!("the endpoint reported an error in the stream: {message}"),
    )
    .with_hint("read the endpoint's message; try again")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_bounded_in_number_name_and_size() {
        let mut b = ReplyBuilder::new(true);
        let mut pieces = Vec::new();
        for i in 0..MAX_TOOL_CALLS {
            b.call(i, None, None, None, &mut |p| pieces.push(p))
                .unwrap();
        }
        assert_eq!(b.bytes, MAX_TOOL_CALLS * CALL_ENTRY_BYTES);
        let err = b.call(MAX_TOOL_CALLS, None, None, None, &mut |_| {});
        assert!(err.unwrap_err().message.contains("more than 128"));
        let mut b = ReplyBuilder::new(false);
        let long = "n".repeat(MAX_CALL_NAME_BYTES + 1);
        let err = b.call(0, None, Some(long), None, &mut |_| {}).unwrap_err();
        assert_eq!(err.class, ModelFailureClass::BadResponse);
        assert!(err.message.contains("the name of tool call 0 is over"));
    }

    #[test]
    fn calls_without_ids_are_numbered_and_names_are_reported_once() {
        let mut b = ReplyBuilder::new(true);
        let mut pieces = Vec::new();
        let mut on = |p| pieces.push(p);
        b.call(3, None, Some("a".into()), Some("{"), &mut on)
            .unwrap();
        b.call(3, None, Some("a".into()), Some("}"), &mut on)
            .unwrap();
        b.call(5, Some("x".into()), Some("b".into()), None, &mut on)
            .unwrap();
        let reply = b.build();
        assert_eq!(reply.tool_calls[0].id, "call_0");
        assert_eq!(reply.tool_calls[0].arguments, "{}");
        assert_eq!(reply.tool_calls[1].id, "x");
        assert_eq!(pieces.len(), 2);
    }
}
