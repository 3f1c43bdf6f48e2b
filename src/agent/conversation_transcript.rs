//! What a conversation writes to its transcript: records kept as they come, written as a
//! model request or a turn's calls begin to wait and when a prompt ends; and items added
//! from elsewhere, written with their records.

use std::sync::PoisonError;

use super::Conversation;
use crate::agent::transcript::{now_ms, Record, Transcript};
use crate::agent::turn::Item;

impl Conversation {
    pub(super) fn record(&mut self, record: Record) {
        if let Some(transcript) = self.transcript_mut() {
            transcript.append(record);
        }
    }

    fn transcript_mut(&mut self) -> Option<&mut Transcript> {
        self.transcript
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
    }

    /// Writes the transcript's records so far: when a prompt ends (and see `write_shared`).
    pub(super) fn sync(&mut self) {
        if let Some(transcript) = self.transcript_mut() {
            transcript.write_out();
        }
    }

    /// [`sync`](Self::sync) from where the conversation is held shared: as a model request or
    /// a turn's calls begin to wait (`calls::after_first_poll`).
    pub(super) fn write_shared(&self) {
        let mut transcript = self
            .transcript
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(transcript) = transcript.as_mut() {
            transcript.write_out();
        }
    }

    /// Adds items from elsewhere (a server prompt's, `/`) to the conversation and its
    /// transcript, without asking the model.
    pub fn add_items(&mut self, items: Vec<Item>) {
        for item in items {
            let record = match &item {
                Item::User { text } => Record::Prompt {
                    at_ms: now_ms(),
                    text: text.clone(),
                },
                Item::Assistant { text, .. } => Record::Assistant {
                    turn: 0,
                    text: text.clone(),
                    reasoning: Vec::new(),
                    tool_calls: Vec::new(),
                    finish_reason: None,
                    usage: None,
                    latency_ms: 0,
                },
                Item::ToolResult { .. } => continue,
            };
            self.record(record);
            self.history.push(item);
        }
        self.sync();
    }
}
