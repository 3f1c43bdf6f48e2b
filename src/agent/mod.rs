//! The agent: a model drives the runtime. The conversation's provider-neutral items (`turn`),
//! the model client and the providers whose wires it speaks, the loop of turns, and the
//! conversation's transcript.
//!
//! Above `runtime/` and below `tui/` and `cli/` (docs/ARCHITECTURE.md §2): the agent is one more
//! caller of `AgentRuntime::call`, so its calls pass the same gate, ledger and events as an
//! operator's.

pub mod attach;
pub mod client;
pub mod context;
pub mod conversation;
pub mod endpoint;
pub mod events;
pub mod failure;
mod http;
mod json;
pub mod observe;
pub mod profile;
pub mod providers;
pub mod sampling;
pub mod session;
pub mod start;
pub mod stream;
mod tool_text;
pub mod transcript;
pub mod turn;

pub use client::{HttpModelClient, ModelClient, ModelEvent};
pub use conversation::{Conversation, ConversationSettings};
pub use events::{AgentEvent, PromptOutcome, PromptReport, ToolCallStatus};
pub use failure::{ModelError, ModelFailureClass};
pub use json::{agent_event_from_json, agent_json, report_from_json};
