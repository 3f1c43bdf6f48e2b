//! Which definition of each tool the operator approved (`tool/pin.rs` says what a pin is).
//!
//! A tool is pinned when the operator approves it for the session or always, or when an `allow`
//! or `ask` rule first applies to it (the rule's own `pin` when it has one, else the definition
//! it met first). A pinned tool whose server now offers another definition is *changed*: the
//! gate asks before it runs, whatever rules and session approvals said, and the question shows
//! the diff. Approving it pins the new definition.
//!
//! The approved definitions are kept by pin in a small store on disk (`PinStore`), so a change
//! found at the next start can still be shown as a diff.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::tool::pin::{self, DiffLine};
use crate::tool::ToolDescriptor;

/// A tool's pin, as the Tools pane, `tools --json` and hooks see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PinState {
    /// Nothing the operator approved holds this tool (or it is a local tool).
    Unpinned,
    /// The definition offered is the one approved; `by` is what approved it.
    Pinned { pin: String, by: String },
    /// Another definition was approved (`approved`); the one offered now is `pin`.
    Changed {
        pin: String,
        approved: String,
        by: String,
    },
}

impl PinState {
    pub fn is_changed(&self) -> bool {
        matches!(self, PinState::Changed { .. })
    }

    /// `changed since approved (policy.rules[0] (tool …): sha256:3f9a0c12d4e5; the server
    /// now offers sha256:…)`, `pinned sha256:… (your approval for this session)`.
    pub fn words(&self) -> String {
        match self {
            PinState::Unpinned => "not pinned".to_string(),
            PinState::Pinned { pin, by } => format!("pinned {} ({by})", pin::short(pin)),
            PinState::Changed { pin, approved, by } => format!(
                "changed since approved ({by}: {}; the server now offers {})",
                pin::short(approved),
                pin::short(pin)
            ),
        }
    }
}

/// A tool's `pin` as JSON: `{"pin": "sha256:…", "state": "pinned", "by": …}` (`approved`
/// too when changed; the pin alone when `state` is not known); `null` for a local tool.
pub fn pin_json(tool: &ToolDescriptor, state: Option<PinState>) -> Value {
    let Some(pin) = &tool.pin else {
        return Value::Null;
    };
    let mut value = state
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    value["pin"] = Value::String(pin.clone());
    value
}

/// What changed in a pinned tool, for the question the operator is asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PinChange {
    /// The pin approved before.
    pub approved: String,
    /// The pin of the definition offered now.
    pub pin: String,
    /// What approved the old one (`policy.rules[0] (tool …)`, `your approval for this
    /// session`).
    pub by: String,
    /// The diff, old to new; empty when the old definition is not known (pinned by a rule
    /// written elsewhere, its definition never seen here).
    pub diff: Vec<DiffLine>,
}

/// One pinned definition.
#[derive(Debug, Clone)]
pub(crate) struct Pinned {
    pub(crate) pin: String,
    pub(crate) by: String,
    /// Set when the pin was taken from a rule (dropped when the rules are replaced, and taken
    /// again from the new ones).
    pub(crate) from_rule: bool,
    /// The definition that was approved, when known.
    pub(crate) definition: Option<Arc<Value>>,
}

/// The pins of one runtime, by tool name. The gate owns them behind a lock.
#[derive(Debug, Default)]
pub(crate) struct Pins {
    map: HashMap<String, Pinned>,
}

impl Pins {
    pub(crate) fn get(&self, name: &str) -> Option<&Pinned> {
        self.map.get(name)
    }

    pub(crate) fn insert(&mut self, name: &str, pinned: Pinned) {
        self.map.insert(name.to_string(), pinned);
    }

    /// Forgets the pins taken from rules (the rules were replaced).
    pub(crate) fn drop_rule_pins(&mut self) {
        self.map.retain(|_, p| !p.from_rule);
    }

    pub(crate) fn state(&self, tool: &ToolDescriptor) -> PinState {
        let (Some(current), Some(pinned)) = (&tool.pin, self.map.get(&tool.name)) else {
            return PinState::Unpinned;
        };
        if &pinned.pin == current {
            PinState::Pinned {
                pin: current.clone(),
                by: pinned.by.clone(),
            }
        } else {
            PinState::Changed {
                pin: current.clone(),
                approved: pinned.pin.clone(),
                by: pinned.by.clone(),
            }
        }
    }
}

/// Approved definitions on disk, one file per pin (`<hex>.json`, owner-only), so that a rule's
/// pin written in the config can be shown as a diff after a restart.
#[derive(Debug, Clone)]
pub struct PinStore {
    dir: PathBuf,
}

impl PinStore {
    /// `$XDG_STATE_HOME/aimon-console/pins`.
    pub fn default_place() -> PinStore {
        PinStore::at(crate::config::state_home().join("pins"))
    }

    pub fn at(dir: PathBuf) -> PinStore {
        PinStore { dir }
    }

    fn file(&self, pin: &str) -> Option<PathBuf> {
        pin::is_pin(pin).then(|| self.dir.join(format!("{}.json", &pin["sha256:".len()..])))
    }

    /// Keeps `definition` under its pin. Best effort: a store that cannot be written loses
    /// only the diff shown after a restart, never a decision.
    pub fn save(&self, pin: &str, definition: &Value) {
        let Some(path) = self.file(pin) else { return };
        if path.exists() {
            return;
        }
        if let Err(e) = crate::config::write_private(&path, &definition.to_string()) {
            tracing::debug!(path = %path.display(), error = %e, "pinned definition not kept");
        }
    }

    /// The definition kept under `pin`, when it is there and still hashes to it.
    pub fn load(&self, pin: &str) -> Option<Value> {
        let text = std::fs::read_to_string(self.file(pin)?).ok()?;
        let value: Value = serde_json::from_str(&text).ok()?;
        (pin::hash(&value) == pin).then_some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_store_keeps_a_definition_under_its_pin_and_refuses_a_forged_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = PinStore::at(dir.path().join("pins"));
        let def = json!({"name": "write_note", "description": "Writes a note."});
        let pin = pin::hash(&def);
        store.save(&pin, &def);
        assert_eq!(store.load(&pin), Some(def));
        let file = dir.path().join("pins").join(format!("{}.json", &pin[7..]));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A file that no longer hashes to its name is not believed.
        std::fs::write(&file, r#"{"name":"write_note","description":"other"}"#).unwrap();
        assert_eq!(store.load(&pin), None);
        assert_eq!(store.load("sha256:../../etc/passwd"), None);
    }
}
