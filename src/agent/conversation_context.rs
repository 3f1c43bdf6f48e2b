//! The conversation's context: a tool result over `max_result_tokens` cut for the model (the
//! whole kept for `read_result`), the meter after each turn, and compaction: before a request
//! that would not leave the answer its room in the context window, the turns before the
//! current prompt are summarised by the model and replaced by the summary (the transcript
//! keeps every original turn and marks the compaction; `--resume` continues from it).

use tokio_util::sync::CancellationToken;

use super::super::context::{self, as_text, compaction_start, summary_items};
use super::super::events::AgentEvent;
use super::super::failure::{ModelError, ModelFailureClass};
use super::super::transcript::{now_ms, Record};
use super::super::turn::{History, Item, ToolChoice, ToolList};
use super::Conversation;
use crate::tool::local::read_result;

/// The system prompt of a summary request.
const SUMMARY_SYSTEM: &str = "You summarise a conversation between a user and an assistant that \
uses tools, so that the assistant can go on with it from the summary alone.";

/// What a summary request asks, before the conversation's text.
const SUMMARY_ASK: &str = "Summarise the conversation below: what the user asked, what was done \
with which tools and what came of it, and what is still open. Be brief; keep names, numbers \
and ids that matter.";

/// The longest summary asked for (tokens), and at most an eighth of the window.
const MAX_SUMMARY_TOKENS: u32 = 1024;

/// Which of the conversation's reported counts a request of `choice` goes on from.
fn slot(choice: ToolChoice) -> usize {
    match choice {
        ToolChoice::Auto => 0,
        ToolChoice::None => 1,
    }
}

impl Conversation {
    /// What the model is sent of a call's result: `None` when it fits `max_result_tokens`;
    /// else its head and tail, the whole kept as result `SESSION-tTURN-CALL` for
    /// `read_result` (offered from then on, for the rest of the prompt).
    pub(super) fn budgeted(&mut self, turn: u32, call_id: &str, content: &str) -> Option<String> {
        let max = usize::try_from(self.settings.max_result_tokens)
            .unwrap_or(usize::MAX)
            .saturating_mul(context::BYTES_PER_TOKEN);
        if content.len() <= max {
            return None;
        }
        self.cut_in_prompt = true;
        let id = format!("{}-t{turn}-{}", self.session, read_result::id_of(call_id));
        let kept = match read_result::keep(&read_result::results_dir(), &id, content) {
            Ok(()) => Some(id.as_str()),
            Err(e) => {
                tracing::warn!(error = %e, "a long tool result could not be kept");
                None
            }
        };
        Some(context::cut_result(content, max, kept))
    }

    /// The estimated tokens of a request with `tools` and `choice`: the system prompt, the
    /// definitions and the history at four bytes a token, scaled by how far the endpoint's
    /// own count of the last request of that choice was above the same estimate (a chat
    /// template's framing, a tokenizer that splits finer; one asked to answer in words may be
    /// sent without the definitions: llama.cpp leaves them out). Never scaled down.
    pub(super) fn estimate(&mut self, choice: ToolChoice) -> u64 {
        let raw = self.raw_estimate();
        let scaled = raw as f64 * self.calibration[slot(choice)].max(1.0);
        scaled.min(u64::MAX as f64) as u64
    }

    /// The unscaled estimate: four bytes a token; the turn's tool list as counted when it was
    /// made, the history's items counted once each (as they are added).
    fn raw_estimate(&mut self) -> u64 {
        let tools = self.tools.as_ref().map_or(0, |t| t.tokens);
        let system = context::tokens(self.settings.system_prompt.len());
        let items = self.history.items();
        let (counted, sum) = match self.items_tokens {
            (len, sum) if len <= items.len() => (len, sum),
            _ => (0, 0),
        };
        let sum = sum
            + items[counted..]
                .iter()
                .map(context::item_tokens)
                .sum::<u64>();
        self.items_tokens = (items.len(), sum);
        system + tools + sum
    }

    /// After a turn's answer: the meter (the endpoint's count of input and output when it gave
    /// one, else the estimate), and the estimate's scale from that count.
    pub(super) fn measured(&mut self, input: Option<u64>, output: u64, choice: ToolChoice) {
        let (used, estimated) = match input.filter(|n| *n > 0) {
            Some(input) => {
                let used = input.saturating_add(output);
                let raw = self.raw_estimate().max(1);
                self.calibration[slot(choice)] = used as f64 / raw as f64;
                (used, false)
            }
            None => (self.estimate(choice), true),
        };
        self.emit(AgentEvent::Context {
            used,
            window: self.settings.context_window.map(u64::from),
            estimated,
            tools: self.tools.as_ref().map_or(0, |t| t.tokens),
        });
    }

    /// Before a request: compacts the turns before the current prompt when the request would
    /// leave the answer less than its room (`max_tokens`, at least a quarter of the window).
    pub(super) async fn make_room(&mut self, choice: ToolChoice, cancel: &CancellationToken) {
        let Some(window) = self.settings.context_window.map(u64::from) else {
            return;
        };
        let room = self
            .settings
            .max_tokens
            .map_or(0, u64::from)
            .max(window / 4);
        let used = self.estimate(choice);
        if used + room <= window {
            return;
        }
        if let Some(start) = compaction_start(self.history.items()) {
            self.compact_from(start, cancel).await;
        }
    }

    /// Summarises the whole conversation (`/compact`): the next prompt goes on from the
    /// summary.
    pub async fn compact(&mut self, cancel: &CancellationToken) {
        let end = self.history.len();
        if end > 0 {
            self.compact_from(end, cancel).await;
        }
    }

    /// Replaces the items before `start` by the model's summary of them.
    async fn compact_from(&mut self, start: usize, cancel: &CancellationToken) {
        let items = self.history.items();
        let before: u64 = items.iter().map(context::item_tokens).sum();
        let window = self.settings.context_window.unwrap_or(32_768);
        let max_summary = (window / 8).clamp(64, MAX_SUMMARY_TOKENS);
        // What the summary request may hold: half the window, at two bytes a token (a
        // tokenizer may split text finer than the estimate's four, and this request must fit).
        let text = as_text(
            &items[..start],
            usize::try_from(window / 2).unwrap_or(0) * 2,
        );
        let ask = History::new(
            Some(SUMMARY_SYSTEM.into()),
            vec![Item::User {
                text: format!("{SUMMARY_ASK}\n\n<conversation>\n{text}</conversation>"),
            }],
        );
        let client = self.client.limited(max_summary, None);
        let no_tools = ToolList::default();
        let reply = tokio::select! {
            biased;
            () = cancel.cancelled() => return,
            reply = client.complete(&ask, &no_tools, ToolChoice::None, &|_| {}) => reply,
        };
        let summary = match reply {
            Ok(reply) if !reply.text.trim().is_empty() => reply.text,
            Ok(_) => {
                let error = ModelError::new(
                    ModelFailureClass::BadResponse,
                    "the summary came back empty".to_string(),
                );
                return self.compaction_failed(error);
            }
            Err(error) => return self.compaction_failed(error),
        };
        let kept = self.history.len() - start;
        let mut rest = summary_items(&summary);
        rest.extend(self.history.items()[start..].iter().cloned());
        self.history = History::new(Some(self.settings.system_prompt.clone()), rest);
        self.items_tokens = (0, 0);
        let after: u64 = self.history.items().iter().map(context::item_tokens).sum();
        self.record(Record::Compacted {
            at_ms: now_ms(),
            summary,
            kept,
        });
        self.sync();
        self.emit(AgentEvent::Compacted {
            items: start,
            before,
            after,
            error: None,
        });
    }

    fn compaction_failed(&mut self, error: ModelError) {
        tracing::warn!(error = %error, "the conversation could not be compacted");
        self.emit(AgentEvent::Compacted {
            items: 0,
            before: 0,
            after: 0,
            error: Some(error),
        });
    }
}
