//! The conversation as the agent knows it, whichever model API carries it: turn items (a user's
//! text, a model's answer with its reasoning and tool calls, a tool's result), why an answer
//! ended, and what it cost in tokens. The loop, the transcript, the console and `run` know only
//! these; each provider (`providers/`) maps its wire to and from them, as codex-rs maps Chat
//! Completions onto its own items so that the rest of the pipeline stays agnostic.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One item of a conversation (the system prompt is the [`History`]'s own).
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// What the user said: the typed text, with any attached resources after it
    /// (`attach::with_attachments`).
    User { text: String },
    /// A model's answer.
    Assistant {
        text: String,
        /// Its reasoning (thinking) as the provider that answered needs it back.
        reasoning: Vec<Reasoning>,
        calls: Vec<ToolCall>,
    },
    /// What one tool call gave, for the model.
    ToolResult { call_id: String, text: String },
}

impl Item {
    /// A model's answer as the history keeps it: each call's arguments as the model wrote them
    /// when they are a JSON object, `{}` when not (empty, cut short at `max_tokens`, an array). The
    /// model hears of its bad arguments in that call's result; an endpoint that reads the
    /// history's calls back as JSON (llama.cpp's server) would refuse every later request of
    /// the conversation, and of a resumed one. The transcript keeps what the model wrote.
    pub fn assistant(text: String, reasoning: Vec<Reasoning>, mut calls: Vec<ToolCall>) -> Item {
        for call in &mut calls {
            if !call.arguments_are_an_object() {
                call.arguments = "{}".to_string();
            }
        }
        Item::Assistant {
            text,
            reasoning,
            calls,
        }
    }
}

/// A tool call the model asked for. `arguments` is the JSON text the model wrote (it may not
/// be JSON at all: that goes back to the model as an error).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl ToolCall {
    /// Whether the arguments are a JSON object (checked without building a value; the call
    /// parses its arguments once more when it runs).
    pub fn arguments_are_an_object(&self) -> bool {
        self.arguments.trim_start().starts_with('{')
            && serde_json::from_str::<serde::de::IgnoredAny>(&self.arguments).is_ok()
    }
}

/// A model's reasoning, kept to be sent back as its provider requires (Anthropic's thinking
/// blocks with their signatures, the Responses API's reasoning items). Only the provider that
/// wrote it reads `state`; another leaves it out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reasoning {
    /// The provider that wrote it (`anthropic`, `openai-responses`).
    pub provider: String,
    /// What can be read of it (a summary, or the thinking itself); may be empty.
    #[serde(default)]
    pub text: String,
    /// The item as the provider gave it, to give back unchanged.
    pub state: Value,
}

/// Why an answer ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// The model was done.
    Stop,
    /// It asked for tool calls.
    ToolCalls,
    /// It was cut at the token limit (`max_tokens`).
    Length,
    /// A content filter or a refusal stopped it.
    ContentFilter,
    /// Another reason, as the endpoint named it.
    Other(String),
}

impl FinishReason {
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Other(other) => other,
        }
    }

    /// The reason named `name` (the words of [`as_str`](Self::as_str); any other is `Other`).
    pub fn named(name: &str) -> FinishReason {
        match name {
            "stop" => FinishReason::Stop,
            "tool_calls" => FinishReason::ToolCalls,
            "length" => FinishReason::Length,
            "content_filter" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_string()),
        }
    }
}

impl From<&str> for FinishReason {
    fn from(name: &str) -> FinishReason {
        FinishReason::named(name)
    }
}

impl Serialize for FinishReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FinishReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(FinishReason::named(&String::deserialize(d)?))
    }
}

/// Token counts of one answer, as the endpoint reported them (the GenAI semantic conventions'
/// words: `input_tokens` counts every token read, `cached_input_tokens` those of them read
/// from a prompt cache).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_input_tokens: u64,
}

impl Usage {
    /// Input and output.
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Adds `other` (an endpoint's counts are its own: a sum past u64::MAX stays there).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cached_input_tokens = self
            .cached_input_tokens
            .saturating_add(other.cached_input_tokens);
    }
}

/// A tool as the model sees it: the registry's safe name, and the description and input
/// schema exactly as the server sent them (docs/ARCHITECTURE.md §3).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// Whether the model may call tools in a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolChoice {
    /// It may.
    Auto,
    /// It is asked to answer in words: the last turn `max_turns` allows.
    None,
}

/// A conversation's system prompt and items, with their wire JSON kept by the provider that
/// sends them. Each item is encoded once, when a request first carries it, and later requests
/// copy those bytes: encoding the whole history again for every turn was a quarter of a turn's
/// CPU, and grew with the conversation.
#[derive(Default)]
pub struct History {
    system: Option<String>,
    items: Vec<Item>,
    encoded: Mutex<Encoded>,
}

/// The items' wire JSON for one provider: `json` holds the first `ends.len()` items' values,
/// comma-separated; item `i` ends at `ends[i]`.
#[derive(Default)]
struct Encoded {
    provider: &'static str,
    json: Vec<u8>,
    ends: Vec<usize>,
}

/// Where a provider writes the JSON values of the items it encodes, comma-separated.
pub struct JsonSeq<'a>(&'a mut Vec<u8>);

impl JsonSeq<'_> {
    /// The buffer to write the next value to (after a comma when it is not the first).
    pub fn value(&mut self) -> &mut Vec<u8> {
        if !self.0.is_empty() {
            self.0.push(b',');
        }
        self.0
    }
}

impl History {
    /// A conversation with `system` as its system prompt (none: empty or absent), and `items`.
    pub fn new(system: Option<String>, items: Vec<Item>) -> Self {
        History {
            system: system.filter(|s| !s.trim().is_empty()),
            items,
            encoded: Mutex::default(),
        }
    }

    pub fn system(&self) -> Option<&str> {
        self.system.as_deref()
    }

    pub fn items(&self) -> &[Item] {
        &self.items
    }

    pub fn push(&mut self, item: Item) {
        self.items.push(item);
    }

    /// Where the history ends now, for [`truncate`](History::truncate).
    pub fn mark(&self) -> HistoryMark {
        HistoryMark(self.items.len())
    }

    /// Drops what was pushed since `mark` was taken.
    pub fn truncate(&mut self, mark: HistoryMark) {
        if mark.0 >= self.items.len() {
            return;
        }
        self.items.truncate(mark.0);
        let encoded = self.encoded.get_mut().unwrap_or_else(|e| e.into_inner());
        if encoded.ends.len() > mark.0 {
            encoded.ends.truncate(mark.0);
            let end = encoded.ends.last().copied().unwrap_or(0);
            encoded.json.truncate(end);
        }
    }

    /// Drops the last user item and what follows it (a prompt the model never answered).
    pub fn drop_last_prompt(&mut self) {
        if let Some(at) = self
            .items
            .iter()
            .rposition(|i| matches!(i, Item::User { .. }))
        {
            self.truncate(HistoryMark(at));
        }
    }

    /// How many items the conversation has.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// `with` the items' JSON as `provider` encodes them (`encode` writes an item's values to
    /// the sequence), encoding only the items not encoded yet. A history sent by another
    /// provider than last time is encoded again from its start.
    pub fn encoded<R>(
        &self,
        provider: &'static str,
        encode: impl Fn(&Item, &mut JsonSeq<'_>),
        with: impl FnOnce(&[u8]) -> R,
    ) -> R {
        let mut encoded = self.encoded.lock().unwrap_or_else(|e| e.into_inner());
        if encoded.provider != provider {
            *encoded = Encoded {
                provider,
                ..Encoded::default()
            };
        }
        for item in &self.items[encoded.ends.len()..] {
            encode(item, &mut JsonSeq(&mut encoded.json));
            let end = encoded.json.len();
            encoded.ends.push(end);
        }
        with(&encoded.json)
    }
}

impl Clone for History {
    fn clone(&self) -> Self {
        History::new(self.system.clone(), self.items.clone())
    }
}

impl PartialEq for History {
    fn eq(&self, other: &Self) -> bool {
        self.system == other.system && self.items == other.items
    }
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History")
            .field("system", &self.system.is_some())
            .field("items", &self.items.len())
            .finish()
    }
}

/// A point in a [`History`] to go back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryMark(usize);

/// A turn's tools, with their wire JSON as the provider that sends them made it, kept: a
/// conversation offers the same list turn after turn.
#[derive(Debug, Default)]
pub struct ToolList {
    specs: Vec<ToolSpec>,
    /// The names, in order, as each turn's `TurnStarted` event carries them.
    names: Arc<[String]>,
    encoded: Mutex<Option<Encoding>>,
}

/// A tool list's JSON, and the provider that encoded it.
type Encoding = (&'static str, Arc<[u8]>);

impl ToolList {
    pub fn new(specs: Vec<ToolSpec>) -> Self {
        let names = specs.iter().map(|s| s.name.clone()).collect();
        ToolList {
            specs,
            names,
            encoded: Mutex::default(),
        }
    }

    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    pub fn names(&self) -> &Arc<[String]> {
        &self.names
    }

    /// Whether a tool of this name is on the list (a scan: cheaper than a set for the few
    /// calls of a turn).
    pub fn offers(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    /// The list's JSON as `provider` encodes it, made once.
    pub fn encoded(
        &self,
        provider: &'static str,
        encode: impl FnOnce(&[ToolSpec]) -> Vec<u8>,
    ) -> Arc<[u8]> {
        let mut held = self.encoded.lock().unwrap_or_else(|e| e.into_inner());
        match &*held {
            Some((by, json)) if *by == provider => json.clone(),
            _ => {
                let json: Arc<[u8]> = encode(&self.specs).into();
                *held = Some((provider, json.clone()));
                json
            }
        }
    }
}

impl Clone for ToolList {
    fn clone(&self) -> Self {
        ToolList::new(self.specs.clone())
    }
}

impl PartialEq for ToolList {
    fn eq(&self, other: &Self) -> bool {
        self.specs == other.specs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Item {
        Item::User { text: text.into() }
    }

    /// A provider that writes each item's text, a value per item.
    fn encode(item: &Item, out: &mut JsonSeq<'_>) {
        let text = match item {
            Item::User { text } | Item::ToolResult { text, .. } => text,
            Item::Assistant { text, .. } => text,
        };
        let _ = serde_json::to_writer(out.value(), text);
    }

    #[test]
    fn items_are_encoded_once_and_a_truncate_drops_their_json() {
        let mut history = History::new(Some("sys".into()), vec![user("a")]);
        let json =
            |h: &History| h.encoded("p", encode, |j| String::from_utf8_lossy(j).into_owned());
        assert_eq!(json(&history), r#""a""#);
        let mark = history.mark();
        history.push(user("b"));
        history.push(user("c"));
        assert_eq!(json(&history), r#""a","b","c""#);
        history.truncate(mark);
        assert_eq!(history.len(), 1);
        assert_eq!(json(&history), r#""a""#);
        history.push(user("d"));
        assert_eq!(json(&history), r#""a","d""#);
        // Another provider encodes it all again, in its own way.
        let other = history.encoded(
            "q",
            |_, out| out.value().extend_from_slice(b"0"),
            |j| String::from_utf8_lossy(j).into_owned(),
        );
        assert_eq!(other, "0,0");
    }

    #[test]
    fn arguments_that_are_not_an_object_are_kept_as_an_empty_one() {
        let call = |arguments: &str| ToolCall {
            id: "c".into(),
            name: "t".into(),
            arguments: arguments.into(),
        };
        let Item::Assistant { calls, .. } = Item::assistant(
            String::new(),
            Vec::new(),
            vec![call("{\"a\":1}"), call("{\"a\":"), call("[1]"), call("")],
        ) else {
            unreachable!()
        };
        let kept: Vec<&str> = calls.iter().map(|c| c.arguments.as_str()).collect();
        assert_eq!(kept, vec!["{\"a\":1}", "{}", "{}", "{}"]);
    }

    #[test]
    fn finish_reasons_read_back_as_written() {
        for reason in [
            FinishReason::Stop,
            FinishReason::ToolCalls,
            FinishReason::Length,
            FinishReason::ContentFilter,
            FinishReason::Other("pause_turn".into()),
        ] {
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(serde_json::from_str::<FinishReason>(&json).unwrap(), reason);
        }
    }
}
