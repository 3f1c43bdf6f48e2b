//! `ApprovalGate`: decides, from a `ToolDescriptor` alone (and what a `pre_tool_use` hook said),
//! whether a call runs, asks, is denied or is refused.
//!
//! Order: (1) a hook's deny, then the first matching rule's deny, win over everything; (2) the
//! side-effect ceiling refuses; (3) a *changed* tool (`pins.rs`: its server now offers another
//! definition than the one approved or pinned by a rule) asks, with the diff, whatever (4)–(6)
//! would say; then a flagged tool (`tool/poison.rs`: its texts hide something or speak to the
//! model) is denied under `policy.flagged: deny`, else asks (a session approval still counts);
//! (4) a matching `ask` rule asks (a session approval still counts); (5) a hook's allow, then an
//! `allow` rule, run without asking; (6) with no rule or hook deciding, the policy as always:
//! `never` runs; a read-only, non-destructive tool under `ask_mutating` runs; a session approval
//! of this exact tool runs; everything else asks. A destructive tool therefore always asks unless
//! the policy is `never` or a rule or hook allows it, and nothing passes the ceiling.

use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use crate::config::{
    ApprovalPolicy, ApprovalRule, FlaggedPolicy, PolicyConfig, RuleDecision, SideEffectCeiling,
};
use crate::tool::{pin, DestructiveBehavior, SideEffectLevel, ToolDescriptor};

use super::ledger::{Ledger, LedgerEntry, LedgerError};
use super::pins::{PinChange, PinState, PinStore, Pinned, Pins};
use super::rules::{first_rule, rule_label, HookDecision, HookVerdict};
use super::{ApprovalDecision, GateVerdict, RunBy};

/// The one approval gate of a runtime. `Send + Sync`; the ledger and the rules sit behind locks
/// (the console adds and removes rules while calls run).
#[derive(Debug)]
pub struct ApprovalGate {
    /// The policy, its `rules` left empty: those live in `rules`.
    policy: PolicyConfig,
    rules: RwLock<Vec<ApprovalRule>>,
    ledger: Mutex<Ledger>,
    pins: Mutex<Pins>,
    /// Where approved definitions are kept for diffs after a restart; `None`: not kept.
    store: Option<PinStore>,
}

impl ApprovalGate {
    pub fn new(mut policy: PolicyConfig) -> Self {
        let rules = std::mem::take(&mut policy.rules);
        ApprovalGate {
            policy,
            rules: RwLock::new(rules),
            ledger: Mutex::new(Ledger::default()),
            pins: Mutex::new(Pins::default()),
            store: None,
        }
    }

    /// The same gate, keeping approved definitions in `store`.
    pub fn with_pin_store(mut self, store: PinStore) -> Self {
        self.store = Some(store);
        self
    }

    fn pins_lock(&self) -> MutexGuard<'_, Pins> {
        // Every change is one map operation: consistent even after a panicking holder.
        self.pins
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The policy, with the rules as they are now.
    pub fn policy(&self) -> PolicyConfig {
        PolicyConfig {
            rules: self.rules(),
            ..self.policy.clone()
        }
    }

    fn ledger_lock(&self) -> MutexGuard<'_, Ledger> {
        // The ledger stays consistent even if a holder panicked: every change is one map operation.
        self.ledger
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `policy.rules` as the gate applies them now.
    pub fn rules(&self) -> Vec<ApprovalRule> {
        self.rules
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Replaces the rules (after the config file's rules were written: the file is the truth).
    pub fn set_rules(&self, rules: Vec<ApprovalRule>) {
        *self
            .rules
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = rules;
        // The pins the old rules took are taken again from the new ones when next needed.
        self.pins_lock().drop_rule_pins();
    }

    /// Pins `tool` if an `allow` or `ask` rule applies to it and nothing pinned it yet: to the
    /// rule's `pin` when it has one, else to the definition offered now. Called when tools are
    /// registered and before their list is refreshed, so a change is caught however it comes.
    pub fn observe(&self, tool: &ToolDescriptor) {
        self.observe_under(tool, self.rule_for(tool).as_ref());
    }

    fn observe_under(&self, tool: &ToolDescriptor, rule: Option<&(usize, ApprovalRule)>) {
        let Some(current) = &tool.pin else { return };
        let Some((index, rule)) = rule else { return };
        if rule.decision == RuleDecision::Deny || self.pins_lock().get(&tool.name).is_some() {
            return;
        }
        let pin = rule.pin.clone().unwrap_or_else(|| current.clone());
        let definition = if &pin == current {
            let definition = pin::definition(tool).map(Arc::new);
            // A pin written in the config: keep what it stands for, for a diff after a restart.
            if let (Some(store), Some(def), Some(_)) = (&self.store, &definition, &rule.pin) {
                store.save(&pin, def);
            }
            definition
        } else {
            self.store.as_ref().and_then(|s| s.load(&pin)).map(Arc::new)
        };
        let mut pins = self.pins_lock();
        if pins.get(&tool.name).is_none() {
            pins.insert(
                &tool.name,
                Pinned {
                    pin,
                    by: rule_label(*index, rule),
                    from_rule: true,
                    definition,
                },
            );
        }
    }

    /// Whether the definition `tool` has now is the one approved.
    pub fn pin_state(&self, tool: &ToolDescriptor) -> PinState {
        self.observe(tool);
        self.pins_lock().state(tool)
    }

    /// What changed in `tool` since it was approved, with the diff; `None` unless changed.
    pub fn pin_change(&self, tool: &ToolDescriptor) -> Option<PinChange> {
        let PinState::Changed { pin, approved, by } = self.pin_state(tool) else {
            return None;
        };
        let before = self
            .pins_lock()
            .get(&tool.name)
            .and_then(|p| p.definition.clone());
        let diff = match (before, pin::definition(tool)) {
            (Some(before), Some(after)) => pin::diff(&before, &after),
            _ => Vec::new(),
        };
        Some(PinChange {
            approved,
            pin,
            by,
            diff,
        })
    }

    /// The first rule that matches `tool`, with its index.
    pub fn rule_for(&self, tool: &ToolDescriptor) -> Option<(usize, ApprovalRule)> {
        let rules = self
            .rules
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        first_rule(&rules, tool).map(|(i, rule)| (i, rule.clone()))
    }

    /// Decides about a call of `tool` when no hook said anything.
    pub fn evaluate(&self, tool: &ToolDescriptor) -> GateVerdict {
        self.decide(tool, None)
    }

    /// Decides about a call of `tool`, given what its `pre_tool_use` hooks said (`None`: they
    /// deferred, said nothing or failed).
    pub fn decide(&self, tool: &ToolDescriptor, hook: Option<&HookDecision>) -> GateVerdict {
        let ceiling = self.policy.side_effect_ceiling;
        let approval = self.policy.approval;
        let rule = self.rule_for(tool);
        self.observe_under(tool, rule.as_ref());
        let rule_says = |decision: RuleDecision| {
            rule.as_ref()
                .filter(|(_, r)| r.decision == decision)
                .map(|(i, r)| rule_label(*i, r))
        };
        let hook_says = |verdict: HookVerdict| hook.filter(|h| h.verdict == verdict);

        // (1) A deny holds, whatever else is configured.
        if let Some(h) = hook_says(HookVerdict::Deny) {
            return GateVerdict::Deny {
                why: format!("denied by {}", h.describe()),
            };
        }
        if let Some(label) = rule_says(RuleDecision::Deny) {
            return GateVerdict::Deny {
                why: format!("denied by {label}"),
            };
        }

        // (2) The ceiling: nothing above it runs, whatever allows it.
        let above_ceiling = match (ceiling, tool.side_effect) {
            (SideEffectCeiling::ReadOnly, SideEffectLevel::Mutating) => true,
            (SideEffectCeiling::ReadOnly, SideEffectLevel::ReadOnly)
            | (SideEffectCeiling::Mutating, SideEffectLevel::ReadOnly)
            | (SideEffectCeiling::Mutating, SideEffectLevel::Mutating) => false,
        };
        if above_ceiling {
            return GateVerdict::Refuse {
                why: format!(
                    "{} is {} and policy.side_effect_ceiling is {}",
                    tool.name,
                    tool.side_effect.as_str(),
                    ceiling.as_str()
                ),
            };
        }

        // (3) A changed tool: what was approved is not what would run.
        if let PinState::Changed { pin, approved, by } = self.pins_lock().state(tool) {
            return GateVerdict::Ask {
                why: format!(
                    "{} changed since approved ({by}: {}; the server now offers {}); \
                     its rules and approvals wait for yours",
                    tool.name,
                    pin::short(&approved),
                    pin::short(&pin)
                ),
            };
        }

        // A flagged tool: what its texts do is not what its traits say.
        if !tool.flags.is_empty() {
            let what = crate::tool::poison::words(&tool.flags);
            match self.policy.flagged {
                FlaggedPolicy::Deny => {
                    return GateVerdict::Deny {
                        why: format!(
                            "{} is flagged ({what}) and policy.flagged is deny",
                            tool.name
                        ),
                    }
                }
                FlaggedPolicy::Ask => {
                    if self.ledger_lock().covers(tool) {
                        return GateVerdict::Run {
                            why: "approved for this session".into(),
                            by: RunBy::Session,
                        };
                    }
                    return GateVerdict::Ask {
                        why: format!("flagged: {what}; policy.flagged is ask"),
                    };
                }
            }
        }

        // (4) An `ask` rule asks, even where the policy or a hook would run the call.
        if let Some(label) = rule_says(RuleDecision::Ask) {
            if self.ledger_lock().covers(tool) {
                return GateVerdict::Run {
                    why: "approved for this session".into(),
                    by: RunBy::Session,
                };
            }
            return GateVerdict::Ask {
                why: format!("{}; {label} says ask", traits(tool)),
            };
        }

        // (5) A hook's or a rule's allow skips the question.
        if let Some(h) = hook_says(HookVerdict::Allow) {
            return GateVerdict::Run {
                why: format!("allowed by {}", h.describe()).into(),
                by: RunBy::Hook,
            };
        }
        if let Some(label) = rule_says(RuleDecision::Allow) {
            return GateVerdict::Run {
                why: format!("allowed by {label}").into(),
                by: RunBy::Rule,
            };
        }

        // (6) What the policy lets through without asking.
        match approval {
            ApprovalPolicy::Never => {
                return GateVerdict::Run {
                    why: match ceiling {
                        SideEffectCeiling::ReadOnly => {
                            "policy.approval is never (within policy.side_effect_ceiling read_only)"
                        }
                        SideEffectCeiling::Mutating => {
                            "policy.approval is never (within policy.side_effect_ceiling mutating)"
                        }
                    }
                    .into(),
                    by: RunBy::Policy,
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
                        why: "the tool is read_only and policy.approval is ask_mutating".into(),
                        by: RunBy::Policy,
                    };
                }
            }
            ApprovalPolicy::AskAll => {}
        }

        // A session approval of this exact tool (same traits, schema and description).
        if self.ledger_lock().covers(tool) {
            return GateVerdict::Run {
                why: "approved for this session".into(),
                by: RunBy::Session,
            };
        }

        // Ask, saying why.
        GateVerdict::Ask {
            why: format!("{}; policy.approval is {}", traits(tool), approval.as_str()),
        }
    }

    /// Records the operator's answer. `AllowForSession` is remembered (and refused, with an
    /// error, for destructive tools). `AllowForSession` and `AllowAlways` (a rule in the config
    /// is its lasting part) pin the definition approved, and so does any allow of a changed
    /// tool: the operator saw the diff. `Deny` changes nothing.
    pub fn record(
        &self,
        tool: &ToolDescriptor,
        decision: ApprovalDecision,
    ) -> Result<(), LedgerError> {
        self.pin_approved(tool, decision);
        match decision {
            ApprovalDecision::AllowForSession => self.ledger_lock().remember(tool),
            ApprovalDecision::AllowOnce
            | ApprovalDecision::AllowAlways
            | ApprovalDecision::Deny => Ok(()),
        }
    }

    fn pin_approved(&self, tool: &ToolDescriptor, decision: ApprovalDecision) {
        let Some(current) = &tool.pin else { return };
        let by = match decision {
            ApprovalDecision::AllowForSession => "your approval for this session",
            ApprovalDecision::AllowAlways => "your always rule (A)",
            ApprovalDecision::AllowOnce => "your approval after it changed",
            ApprovalDecision::Deny => return,
        };
        let changed = self.pins_lock().state(tool).is_changed();
        if decision == ApprovalDecision::AllowOnce && !changed {
            return;
        }
        let definition = pin::definition(tool).map(Arc::new);
        if let (ApprovalDecision::AllowAlways, Some(store), Some(def)) =
            (decision, &self.store, &definition)
        {
            store.save(current, def);
        }
        self.pins_lock().insert(
            &tool.name,
            Pinned {
                pin: current.clone(),
                by: by.to_string(),
                from_rule: false,
                definition,
            },
        );
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
/// `mcp__notes__write_note is mutating, non-destructive (readOnlyHint=false, …)`.
/// What the tool is and why, in one sentence (its provenance said once):
/// `mcp__notes__delete_note is MUTATING and DESTRUCTIVE because server trust is ignore
/// (annotations present but not trusted)`.
fn traits(tool: &ToolDescriptor) -> String {
    let traits = match (tool.side_effect, tool.destructive) {
        (SideEffectLevel::Mutating, DestructiveBehavior::Destructive) => "MUTATING and DESTRUCTIVE",
        (SideEffectLevel::Mutating, DestructiveBehavior::NonDestructive) => "MUTATING",
        (SideEffectLevel::ReadOnly, DestructiveBehavior::Destructive) => {
            "read-only but says it is DESTRUCTIVE"
        }
        (SideEffectLevel::ReadOnly, DestructiveBehavior::NonDestructive) => "read-only",
    };
    // "ignored: server trust is ignore (…)": the sentence already says what ignoring gives.
    let why = tool
        .provenance
        .strip_prefix("ignored: ")
        .unwrap_or(&tool.provenance);
    format!("{} is {traits} because {why}", tool.name)
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "gate_flagged_tests.rs"]
mod flagged_tests;

#[cfg(test)]
#[path = "gate_pins_tests.rs"]
mod pins_tests;
