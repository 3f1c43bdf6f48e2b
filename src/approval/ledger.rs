//! The session approval ledger: which tools the operator allowed for the rest of the session.
//!
//! An entry is keyed by the tool's name *and* a fingerprint of everything that was approved (side
//! effect, destructiveness, input schema, description), so a tool that changes under the same
//! name loses its approval (docs/ARCHITECTURE.md §3). Destructive tools are never remembered.

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::time::SystemTime;

use serde_json::Value;

use crate::tool::{DestructiveBehavior, JsonText, SideEffectLevel, ToolDescriptor};

/// Why an approval could not be remembered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    #[error("{tool} is destructive: it can be allowed once, never for the whole session")]
    DestructiveNotRemembered { tool: String },
}

/// The parts of a descriptor an approval covers, compared exactly (no hash collisions to fear).
#[derive(Debug, Clone, PartialEq)]
pub struct DescriptorFingerprint {
    side_effect: SideEffectLevel,
    destructive: DestructiveBehavior,
    input_schema: JsonText,
    description: String,
}

impl DescriptorFingerprint {
    pub fn of(tool: &ToolDescriptor) -> Self {
        DescriptorFingerprint {
            side_effect: tool.side_effect,
            destructive: tool.destructive,
            input_schema: tool.input_schema.clone(),
            description: tool.description.clone(),
        }
    }

    pub fn side_effect(&self) -> SideEffectLevel {
        self.side_effect
    }

    pub fn destructive(&self) -> DestructiveBehavior {
        self.destructive
    }

    /// A short hex digest for display (`3f9a0c12d4e5b6a7`); key order in the schema does not
    /// change it. Stable within one run of the program only.
    pub fn short(&self) -> String {
        let mut hasher = DefaultHasher::new();
        self.side_effect.hash(&mut hasher);
        self.destructive.hash(&mut hasher);
        hash_json(self.input_schema.parsed(), &mut hasher);
        self.description.hash(&mut hasher);
        format!("{:016x}", hasher.finish())
    }
}

fn hash_json(value: &Value, hasher: &mut DefaultHasher) {
    match value {
        Value::Null => 0u8.hash(hasher),
        Value::Bool(b) => (1u8, b).hash(hasher),
        Value::Number(n) => (2u8, n.to_string()).hash(hasher),
        Value::String(s) => (3u8, s).hash(hasher),
        Value::Array(items) => {
            (4u8, items.len()).hash(hasher);
            for item in items {
                hash_json(item, hasher);
            }
        }
        Value::Object(map) => {
            (5u8, map.len()).hash(hasher);
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            for (key, item) in sorted {
                key.hash(hasher);
                hash_json(item, hasher);
            }
        }
    }
}

/// One remembered approval.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerEntry {
    pub tool_name: String,
    pub fingerprint: DescriptorFingerprint,
    /// When the operator allowed it.
    pub approved_at: SystemTime,
}

/// The remembered approvals, by tool name. Not synchronised: the gate owns it behind a lock.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    entries: BTreeMap<String, LedgerEntry>,
}

impl Ledger {
    /// Remembers `tool` for the session; destructive tools are refused.
    pub(crate) fn remember(&mut self, tool: &ToolDescriptor) -> Result<(), LedgerError> {
        if tool.destructive.is_destructive() {
            return Err(LedgerError::DestructiveNotRemembered {
                tool: tool.name.clone(),
            });
        }
        self.entries.insert(
            tool.name.clone(),
            LedgerEntry {
                tool_name: tool.name.clone(),
                fingerprint: DescriptorFingerprint::of(tool),
                approved_at: SystemTime::now(),
            },
        );
        Ok(())
    }

    /// True when this exact tool (same name, same fingerprint) is remembered. An entry for the
    /// same name with another fingerprint is stale and is dropped.
    pub(crate) fn covers(&mut self, tool: &ToolDescriptor) -> bool {
        let Some(entry) = self.entries.get(&tool.name) else {
            return false;
        };
        if entry.fingerprint == DescriptorFingerprint::of(tool) {
            // `remember` never stores a destructive tool; checked again so no entry can cover one.
            return !tool.destructive.is_destructive();
        }
        self.entries.remove(&tool.name);
        false
    }

    pub(crate) fn entries(&self) -> Vec<LedgerEntry> {
        self.entries.values().cloned().collect()
    }

    pub(crate) fn revoke(&mut self, tool_name: &str) -> bool {
        self.entries.remove(tool_name).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(destructive: DestructiveBehavior) -> ToolDescriptor {
        ToolDescriptor {
            pin: None,
            name: "mcp__demo__write_note".into(),
            description: "Writes a note.".into(),
            input_schema: json!({"type": "object", "properties": {"body": {"type": "string"}}})
                .into(),
            side_effect: SideEffectLevel::Mutating,
            destructive,
            provenance: "readOnlyHint=false, destructiveHint=false, trusted".into(),
            flags: Vec::new(),
            origin: None,
        }
    }

    #[test]
    fn remembers_non_destructive_tools() {
        let mut ledger = Ledger::default();
        let t = tool(DestructiveBehavior::NonDestructive);
        assert!(!ledger.covers(&t));
        assert_eq!(ledger.remember(&t), Ok(()));
        assert!(ledger.covers(&t));
        assert_eq!(ledger.entries().len(), 1);
        assert_eq!(ledger.entries()[0].tool_name, t.name);
    }

    #[test]
    fn refuses_destructive_tools() {
        let mut ledger = Ledger::default();
        let t = tool(DestructiveBehavior::Destructive);
        assert_eq!(
            ledger.remember(&t),
            Err(LedgerError::DestructiveNotRemembered {
                tool: t.name.clone()
            })
        );
        assert!(ledger.entries().is_empty());
    }

    #[test]
    fn a_changed_tool_loses_its_approval() {
        let base = tool(DestructiveBehavior::NonDestructive);
        let changes: [fn(&mut ToolDescriptor); 4] = [
            |t| t.description.push_str(" And deletes things."),
            |t| t.input_schema = json!({"type": "object"}).into(),
            |t| t.side_effect = SideEffectLevel::ReadOnly,
            |t| t.destructive = DestructiveBehavior::Destructive,
        ];
        for change in changes {
            let mut ledger = Ledger::default();
            assert_eq!(ledger.remember(&base), Ok(()));
            let mut changed = base.clone();
            change(&mut changed);
            assert!(!ledger.covers(&changed), "{changed:?}");
            // The stale entry is gone, so the original is not covered either any more.
            assert!(ledger.entries().is_empty());
        }
    }

    #[test]
    fn provenance_alone_does_not_invalidate() {
        let mut ledger = Ledger::default();
        let base = tool(DestructiveBehavior::NonDestructive);
        assert_eq!(ledger.remember(&base), Ok(()));
        let mut same = base.clone();
        same.provenance = "worded differently".into();
        assert!(ledger.covers(&same));
    }

    #[test]
    fn revoke_forgets() {
        let mut ledger = Ledger::default();
        let t = tool(DestructiveBehavior::NonDestructive);
        assert_eq!(ledger.remember(&t), Ok(()));
        assert!(ledger.revoke(&t.name));
        assert!(!ledger.revoke(&t.name));
        assert!(!ledger.covers(&t));
    }

    #[test]
    fn short_fingerprint_ignores_key_order() {
        let mut a = tool(DestructiveBehavior::NonDestructive);
        let mut b = a.clone();
        a.input_schema = json!({"a": 1, "b": [true, null]}).into();
        b.input_schema = json!({"b": [true, null], "a": 1}).into();
        assert_eq!(
            DescriptorFingerprint::of(&a).short(),
            DescriptorFingerprint::of(&b).short()
        );
        b.description = "other".into();
        assert_ne!(
            DescriptorFingerprint::of(&a).short(),
            DescriptorFingerprint::of(&b).short()
        );
    }
}
