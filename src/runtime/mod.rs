//! The agent runtime: owns the tool registry, the MCP manager and the approval gate; runs calls
//! through the gate; publishes every change as a `RuntimeEvent` for whoever drives it.
//!
//! The factory and the close list (DESIGN §3 Lifecycle) are in `lifecycle.rs`; the call path
//! is in `executor.rs`.

mod events;
mod executor;
mod lifecycle;
mod rewake;

pub use events::{EventStream, RuntimeEvent};
pub use executor::{CallOutcome, CallStatus};
pub use lifecycle::{
    trust_changes, AgentRuntime, AgentRuntimeFactory, CloseStep, RuntimeError, RuntimeEvents,
    RuntimeOptions, TraitChange,
};
