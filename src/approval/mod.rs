//! Approval: the side-effect ceiling, the approval policy, the session ledger and the gate.
//!
//! `gate.rs` decides (run, ask, deny or refuse) from a `ToolDescriptor` alone, never from where the
//! tool came from (docs/ARCHITECTURE.md §1), and from what `pre_tool_use` hooks said; `rules.rs` is
//! how `policy.rules` and hook matches select tools; `ledger.rs` remembers session approvals keyed
//! by a descriptor fingerprint; `pins.rs` which definition of each tool was approved;
//! `request.rs` is the question the runtime sends to whoever answers
//! approvals.

mod gate;
mod ledger;
mod pins;
mod request;
mod rules;

pub use gate::ApprovalGate;
pub use ledger::{DescriptorFingerprint, LedgerEntry, LedgerError};
pub use pins::{pin_json, PinChange, PinState, PinStore};
pub use request::{await_decision, AnsweredBy, ApprovalRequest, CallOrigin};
pub use rules::{
    first_rule, glob_matches, pattern_matches, rule_label, server_matches, HookDecision,
    HookVerdict,
};

/// The operator's answer to one approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApprovalDecision {
    /// Run this call only.
    AllowOnce,
    /// Run this call and, for the rest of the session, every call of this exact tool
    /// (never offered for destructive tools).
    AllowForSession,
    /// Run this call; the console writes a rule that allows the tool from now on (`A`).
    AllowAlways,
    /// Do not run this call.
    Deny,
}

impl ApprovalDecision {
    pub const ALL: [ApprovalDecision; 4] = [
        ApprovalDecision::AllowOnce,
        ApprovalDecision::AllowForSession,
        ApprovalDecision::AllowAlways,
        ApprovalDecision::Deny,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::AllowOnce => "allow_once",
            ApprovalDecision::AllowForSession => "allow_for_session",
            ApprovalDecision::AllowAlways => "allow_always",
            ApprovalDecision::Deny => "deny",
        }
    }

    /// Whether the call this answers may run.
    pub fn allows(self) -> bool {
        match self {
            ApprovalDecision::AllowOnce
            | ApprovalDecision::AllowForSession
            | ApprovalDecision::AllowAlways => true,
            ApprovalDecision::Deny => false,
        }
    }
}

/// What let a call run without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunBy {
    /// The policy: a read-only tool under `ask_mutating`, or `approval: never`.
    Policy,
    /// A hook's allow.
    Hook,
    /// An allow rule (`policy.rules`; `A` writes one).
    Rule,
    /// The operator's approval for the session (`a`).
    Session,
}

impl RunBy {
    /// Whether a call it let through is worth naming it for: not the policy's everyday
    /// read-only pass.
    pub fn is_notable(self) -> bool {
        match self {
            RunBy::Policy => false,
            RunBy::Hook | RunBy::Rule | RunBy::Session => true,
        }
    }
}

/// What the gate says about a call, with the reason in words for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateVerdict {
    /// Run without asking; `by` says what let it through. A policy's reason is a fixed text
    /// (nothing shows it, and it is decided on every call), the others are written out.
    Run {
        why: std::borrow::Cow<'static, str>,
        by: RunBy,
    },
    /// Ask the operator first.
    Ask { why: String },
    /// Never run: above the side-effect ceiling.
    Refuse { why: String },
    /// Never run: a hook or a rule denied it.
    Deny { why: String },
}

impl GateVerdict {
    pub fn why(&self) -> &str {
        match self {
            GateVerdict::Run { why, .. } => why,
            GateVerdict::Ask { why } | GateVerdict::Refuse { why } | GateVerdict::Deny { why } => {
                why
            }
        }
    }
}
