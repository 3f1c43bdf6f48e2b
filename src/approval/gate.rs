//! `ApprovalGate`: decides, from a `ToolDescriptor` alone, whether a call runs, asks or is refused.
//!
//! Order (first match wins): the side-effect ceiling refuses; policy `never` runs; a read-only,
//! non-destructive tool under `ask_mutating` runs; a session approval of this exact tool runs;
//! everything else asks. A destructive tool therefore always asks unless the policy is `never`.

use std::sync::{Mutex, MutexGuard};

use crate::config::{ApprovalPolicy, PolicyConfig, SideEffectCeiling};
use crate::tool::{DestructiveBehavior, SideEffectLevel, ToolDescriptor};

use super::ledger::{Ledger, LedgerEntry, LedgerError};
use super::{ApprovalDecision, GateVerdict};

/// The one approval gate of a runtime. `Send + Sync`; the ledger sits behind a lock.
#[derive(Debug)]
pub struct ApprovalGate {
    policy: PolicyConfig,
    ledger: Mutex<Ledger>,
}

impl ApprovalGate {
    pub fn new(policy: PolicyConfig) -> Self {
        ApprovalGate {
            policy,
            ledger: Mutex::new(Ledger::default()),
        }
    }

    pub fn policy(&self) -> PolicyConfig {
        self.policy
    }

    fn ledger_lock(&self) -> MutexGuard<'_, Ledger> {
        // The ledger stays consistent even if a holder panicked: every change is one map operation.
        self.ledger
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Decides about a call of `tool`.
    pub fn evaluate(&self, tool: &ToolDescriptor) -> GateVerdict {
        let ceiling = self.policy.side_effect_ceiling;
        let approval = self.policy.approval;

        // (1) The ceiling: nothing above it runs, whatever else is configured.
        let above_ceiling = match (ceiling, tool.side_effect) {
            (SideEffectCeiling::ReadOnly, SideEffectLevel::Mutating) => true,
            (SideEffectCeiling::ReadOnly, SideEffectLevel::ReadOnly)
            | (SideEffectCeiling::Mutating, SideEffectLevel::ReadOnly)
            | (SideEffectCeiling::Mutating, SideEffectLevel::Mutating) => false,
        };
        if above_ceiling {
            return GateVerdict::Refuse {
                why: format!(
                    "refused: {} is {} and policy.side_effect_ceiling is {}",
                    tool.name,
                    tool.side_effect.as_str(),
                    ceiling.as_str()
                ),
            };
        }

        // (2) and (3): what the policy lets through without asking.
        match approval {
            ApprovalPolicy::Never => {
                return GateVerdict::Run {
                    why: format!(
                        "policy.approval is never (within policy.side_effect_ceiling {})",
                        ceiling.as_str()
                    ),
                };
            }
            ApprovalPolicy::AskMutating => {
                let harmless = match (tool.side_effect, tool.destructive) {
                    (SideEffectLevel::ReadOnly, DestructiveBehavior::NonDestructive) => true,
                    // A read-only tool that claims to be destructive contradicts itself: ask.
                    (SideEffectLevel::ReadOnly, DestructiveBehavior::Destructive)
                    | (SideEffectLevel::Mutating, DestructiveBehavior::NonDestructive)
                    | (SideEffectLevel::Mutating, DestructiveBehavior::Destructive) => false,
                };
                if harmless {
                    return GateVerdict::Run {
                        why: format!(
                            "{} is read_only and policy.approval is ask_mutating",
                            tool.name
                        ),
                    };
                }
            }
            ApprovalPolicy::AskAll => {}
        }

        // (4) A session approval of this exact tool (same traits, schema and description).
        if self.ledger_lock().covers(tool) {
            return GateVerdict::Run {
                why: "approved for this session".to_string(),
            };
        }

        // (5) Ask, saying why.
        GateVerdict::Ask {
            why: format!(
                "{} is {}, {} ({}); policy.approval is {}",
                tool.name,
                tool.side_effect.as_str(),
                destructive_str(tool.destructive),
                tool.provenance,
                approval.as_str()
            ),
        }
    }

    /// Records the operator's answer. `AllowForSession` is remembered (and refused, with an
    /// error, for destructive tools); `AllowOnce` and `Deny` change nothing.
    pub fn record(
        &self,
        tool: &ToolDescriptor,
        decision: ApprovalDecision,
    ) -> Result<(), LedgerError> {
        match decision {
            ApprovalDecision::AllowForSession => self.ledger_lock().remember(tool),
            ApprovalDecision::AllowOnce | ApprovalDecision::Deny => Ok(()),
        }
    }

    /// What is remembered for this session, by tool name.
    pub fn ledger(&self) -> Vec<LedgerEntry> {
        self.ledger_lock().entries()
    }

    /// Forgets the session approval of `tool_name`; true when there was one.
    pub fn revoke(&self, tool_name: &str) -> bool {
        self.ledger_lock().revoke(tool_name)
    }
}

fn destructive_str(destructive: DestructiveBehavior) -> &'static str {
    match destructive {
        DestructiveBehavior::Destructive => "destructive",
        DestructiveBehavior::NonDestructive => "non-destructive",
    }
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
