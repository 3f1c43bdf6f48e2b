//! `ToolRegistry`: the set of callable tools, handed out as immutable snapshots.
//!
//! Separate from the trait so that registration rules (unique names, snapshotting) live in one place.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use super::Tool;

/// A point-in-time view of the registry: cheap to clone, never changes under the holder.
pub type ToolSnapshot = Arc<BTreeMap<String, Arc<dyn Tool>>>;

/// Registration failed because the name is taken; the first holder keeps it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a tool named {0} is already registered")]
pub struct DuplicateTool(pub String);

/// The registry of callable tools. Writers replace the map; readers take snapshots.
#[derive(Default)]
pub struct ToolRegistry {
    tools: RwLock<ToolSnapshot>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool; a name already present is refused and the existing tool kept.
    pub fn register(&self, tool: Arc<dyn Tool>) -> Result<(), DuplicateTool> {
        let name = tool.descriptor().name.clone();
        let mut guard = self.tools.write().unwrap_or_else(|e| e.into_inner());
        if guard.contains_key(&name) {
            return Err(DuplicateTool(name));
        }
        Arc::make_mut(&mut guard).insert(name, tool);
        Ok(())
    }

    /// Removes every tool whose name starts with `prefix` (used when a server's tools are replaced).
    pub fn remove_prefixed(&self, prefix: &str) -> usize {
        let mut guard = self.tools.write().unwrap_or_else(|e| e.into_inner());
        let before = guard.len();
        Arc::make_mut(&mut guard).retain(|name, _| !name.starts_with(prefix));
        before - guard.len()
    }

    /// Replaces every tool whose name starts with `prefix` by `tools`, in one step: a reader
    /// sees the old set or the new one, never neither (a server that came back). A new tool whose
    /// name is held by a tool outside the prefix is refused; the refused names are returned.
    pub fn replace_prefixed(&self, prefix: &str, tools: Vec<Arc<dyn Tool>>) -> Vec<DuplicateTool> {
        let mut guard = self.tools.write().unwrap_or_else(|e| e.into_inner());
        let map = Arc::make_mut(&mut guard);
        map.retain(|name, _| !name.starts_with(prefix));
        let mut refused = Vec::new();
        for tool in tools {
            match map.entry(tool.descriptor().name.clone()) {
                Entry::Occupied(taken) => refused.push(DuplicateTool(taken.key().clone())),
                Entry::Vacant(free) => {
                    free.insert(tool);
                }
            }
        }
        refused
    }

    /// The current set of tools, sorted by name.
    pub fn snapshot(&self) -> ToolSnapshot {
        self.tools.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.snapshot().get(name).cloned()
    }

    pub fn len(&self) -> usize {
        self.snapshot().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{
        DestructiveBehavior, SideEffectLevel, ToolContext, ToolDescriptor, ToolInput, ToolResult,
    };

    struct Named(ToolDescriptor);

    #[async_trait::async_trait]
    impl Tool for Named {
        fn descriptor(&self) -> &ToolDescriptor {
            &self.0
        }
        async fn execute(&self, _input: ToolInput, _ctx: ToolContext) -> ToolResult {
            ToolResult::ok(self.0.description.clone())
        }
    }

    fn tool(name: &str, version: &str) -> Arc<dyn Tool> {
        Arc::new(Named(ToolDescriptor {
            pin: None,
            name: name.into(),
            description: version.into(),
            input_schema: serde_json::json!({"type": "object"}).into(),
            side_effect: SideEffectLevel::ReadOnly,
            destructive: DestructiveBehavior::NonDestructive,
            provenance: String::new(),
            flags: Vec::new(),
            origin: None,
        }))
    }

    #[test]
    fn replace_prefixed_swaps_one_servers_tools_and_keeps_the_rest() {
        let registry = ToolRegistry::new();
        for t in [
            tool("mcp__a__x", "old"),
            tool("mcp__a__y", "old"),
            tool("read", "local"),
        ] {
            assert!(registry.register(t).is_ok());
        }
        let refused = registry.replace_prefixed(
            "mcp__a__",
            vec![
                tool("mcp__a__x", "new"),
                tool("mcp__a__z", "new"),
                tool("read", "clash"),
            ],
        );
        assert_eq!(refused, vec![DuplicateTool("read".into())]);
        let names: Vec<String> = registry.snapshot().keys().cloned().collect();
        assert_eq!(names, ["mcp__a__x", "mcp__a__z", "read"]);
        let description = |n: &str| registry.get(n).map(|t| t.descriptor().description.clone());
        assert_eq!(description("mcp__a__x").as_deref(), Some("new"));
        assert_eq!(description("read").as_deref(), Some("local"));
    }
}
