//! The agent runtime: owns the tool registry, the MCP manager and the approval gate; runs calls
//! through the gate; publishes every change as a `RuntimeEvent` for whoever drives it.
//!
//! The factory and the close list (DESIGN §3 Lifecycle) are in `lifecycle.rs`; the call path
//! is in `executor.rs`, the event queue in `bus.rs`, turn boundaries (tool-list refresh and its
//! diff) in `turn.rs`.

mod bus;
mod events;
mod executor;
mod lifecycle;
mod rewake;
mod turn;

pub use crate::approval::{AnsweredBy, CallOrigin};
pub use bus::{EventStream, FLOOD_BOUND, STALL_LIMIT, TOTAL_BOUND};
pub use events::{log_text, RuntimeEvent};
pub use executor::{Approval, CallOutcome, CallStatus};
pub use lifecycle::{
    trust_changes, AgentRuntime, AgentRuntimeFactory, CloseStep, RuntimeError, RuntimeEvents,
    RuntimeOptions, TraitChange,
};
pub use turn::{ChangeKind, ToolChange, ToolsDiff};
