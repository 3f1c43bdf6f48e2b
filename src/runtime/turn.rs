//! Turn boundaries: where a runtime takes in the tool-list changes servers announced
//! (`tools/list_changed`), never in the middle of a turn, and what it reports about them.
//!
//! A turn is one driver step; in the operator console, one call. A running call keeps the tool
//! it started with; the registry is swapped only here, and a remembered approval whose tool
//! changed (traits, schema or description) or went away is forgotten here, in the open.

use serde::Serialize;

use crate::approval::{ApprovalGate, DescriptorFingerprint};
use crate::tool::ToolDescriptor;

/// What about a tool changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Side effect or destructiveness (as resolved under the server's trust).
    Traits,
    /// The input schema.
    Schema,
    /// The description.
    Description,
    /// The annotations the server sent, without a change of traits (e.g. under `ignore`).
    Annotations,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Traits => "traits",
            ChangeKind::Schema => "schema",
            ChangeKind::Description => "description",
            ChangeKind::Annotations => "annotations",
        }
    }
}

/// One tool listed before and after with differences.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolChange {
    pub before: ToolDescriptor,
    pub after: ToolDescriptor,
    /// What differs, in the order traits, schema, description, annotations.
    pub changes: Vec<ChangeKind>,
}

/// The outcome of listing one stale server's tools again.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolsDiff {
    pub server: String,
    /// New tools, by qualified name.
    pub added: Vec<ToolDescriptor>,
    /// Tools the server no longer lists.
    pub removed: Vec<ToolDescriptor>,
    pub changed: Vec<ToolChange>,
    /// Tools whose remembered session approval was forgotten (changed or removed).
    pub revoked: Vec<String>,
    /// New tools that could not be registered (the name is held by another tool).
    pub refused: Vec<String>,
    /// The re-list failed: the old tools stay, and the server stays stale for the next boundary.
    pub error: Option<String>,
}

impl ToolsDiff {
    /// True when the list came back as it was.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.refused.is_empty()
            && self.error.is_none()
    }
}

/// The differences between `before` and `after` (one server's tools, each sorted by name).
pub(crate) fn diff_tools(
    server: &str,
    before: &[ToolDescriptor],
    after: &[ToolDescriptor],
) -> ToolsDiff {
    let find = |list: &[ToolDescriptor], name: &str| list.iter().find(|t| t.name == name).cloned();
    let mut diff = ToolsDiff {
        server: server.to_string(),
        ..ToolsDiff::default()
    };
    for old in before {
        match find(after, &old.name) {
            None => diff.removed.push(old.clone()),
            Some(new) => {
                let changes = changes(old, &new);
                if !changes.is_empty() {
                    diff.changed.push(ToolChange {
                        before: old.clone(),
                        after: new,
                        changes,
                    });
                }
            }
        }
    }
    diff.added = after
        .iter()
        .filter(|t| find(before, &t.name).is_none())
        .cloned()
        .collect();
    diff
}

fn changes(before: &ToolDescriptor, after: &ToolDescriptor) -> Vec<ChangeKind> {
    let mut out = Vec::new();
    if (before.side_effect, before.destructive) != (after.side_effect, after.destructive) {
        out.push(ChangeKind::Traits);
    }
    if before.input_schema != after.input_schema {
        out.push(ChangeKind::Schema);
    }
    if before.description != after.description {
        out.push(ChangeKind::Description);
    }
    let annotations = |t: &ToolDescriptor| t.origin.as_ref().and_then(|o| o.annotations.clone());
    if !out.contains(&ChangeKind::Traits) && annotations(before) != annotations(after) {
        out.push(ChangeKind::Annotations);
    }
    out
}

/// Forgets the session approvals that no longer describe a tool in `diff` (removed, or
/// changed in what an approval covers); records them in `diff.revoked`.
pub(crate) fn revoke_stale_approvals(gate: &ApprovalGate, diff: &mut ToolsDiff) {
    let ledger = gate.ledger();
    let remembered = |name: &str| ledger.iter().find(|e| e.tool_name == name);
    let mut stale: Vec<String> = diff
        .removed
        .iter()
        .filter(|t| remembered(&t.name).is_some())
        .map(|t| t.name.clone())
        .collect();
    stale.extend(diff.changed.iter().filter_map(|c| {
        remembered(&c.after.name)
            .filter(|e| e.fingerprint != DescriptorFingerprint::of(&c.after))
            .map(|e| e.tool_name.clone())
    }));
    for name in stale {
        if gate.revoke(&name) {
            diff.revoked.push(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::ApprovalDecision;
    use crate::config::PolicyConfig;
    use crate::tool::{DestructiveBehavior, SideEffectLevel};
    use serde_json::json;

    fn tool(name: &str, side: SideEffectLevel, destructive: DestructiveBehavior) -> ToolDescriptor {
        ToolDescriptor {
            pin: None,
            name: format!("mcp__s__{name}"),
            description: format!("{name} things"),
            input_schema: json!({"type": "object"}).into(),
            side_effect: side,
            destructive,
            provenance: String::new(),
            flags: Vec::new(),
            origin: None,
        }
    }

    #[test]
    fn added_removed_and_changed_with_what_changed() {
        use DestructiveBehavior::*;
        use SideEffectLevel::*;
        let before = vec![
            tool("a", ReadOnly, NonDestructive),
            tool("b", ReadOnly, NonDestructive),
            tool("c", Mutating, NonDestructive),
        ];
        let mut a = tool("a", Mutating, Destructive);
        a.description = "new words".into();
        let mut c = tool("c", Mutating, NonDestructive);
        c.input_schema = json!({"type": "object", "required": ["x"]}).into();
        let after = vec![a, c, tool("d", ReadOnly, NonDestructive)];
        let diff = diff_tools("s", &before, &after);
        assert_eq!(diff.removed.len(), 1);
        assert_eq!(diff.removed[0].name, "mcp__s__b");
        assert_eq!(diff.added.len(), 1);
        assert_eq!(diff.added[0].name, "mcp__s__d");
        let what: Vec<(&str, &[ChangeKind])> = diff
            .changed
            .iter()
            .map(|c| (c.after.name.as_str(), c.changes.as_slice()))
            .collect();
        assert_eq!(
            what,
            vec![
                (
                    "mcp__s__a",
                    &[ChangeKind::Traits, ChangeKind::Description][..]
                ),
                ("mcp__s__c", &[ChangeKind::Schema][..]),
            ]
        );
        assert!(!diff.is_empty());
        assert!(diff_tools("s", &before, &before).is_empty());
    }

    #[test]
    fn approvals_of_changed_and_removed_tools_are_forgotten() {
        use DestructiveBehavior::*;
        use SideEffectLevel::*;
        let gate = ApprovalGate::new(PolicyConfig::default());
        let a = tool("a", Mutating, NonDestructive);
        let b = tool("b", Mutating, NonDestructive);
        let c = tool("c", Mutating, NonDestructive);
        for t in [&a, &b, &c] {
            gate.record(t, ApprovalDecision::AllowForSession).unwrap();
        }
        let mut c2 = c.clone();
        c2.provenance = "reworded only".into();
        let mut a2 = a.clone();
        a2.destructive = Destructive;
        let mut diff = diff_tools("s", &[a, b, c], &[a2, c2]);
        revoke_stale_approvals(&gate, &mut diff);
        assert_eq!(diff.revoked, vec!["mcp__s__b", "mcp__s__a"]);
        let left: Vec<String> = gate.ledger().into_iter().map(|e| e.tool_name).collect();
        assert_eq!(left, vec!["mcp__s__c"]);
    }
}
