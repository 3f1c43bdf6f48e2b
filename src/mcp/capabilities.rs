//! What a server said it can do, kept from the handshake: its capabilities (tools, resources
//! with subscribe and list changes, prompts, logging, completions, tasks) and its
//! `instructions`, in the shape `check --json` prints and Details shows.
//!
//! Separate from the report types because it reads rmcp's handshake answer, and from the
//! client because it is only a summary of it.

// Logging is SEP-2577-deprecated in rmcp; the servers of today use it.
#![allow(deprecated)]

use rmcp::model::{ServerCapabilities, ServerPeerInfo};
use serde::Serialize;

/// Most characters of `instructions` kept (a server could send megabytes).
pub const INSTRUCTIONS_CHARS: usize = 65_536;

/// A list the server keeps, and whether it announces changes to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
pub struct ListCapability {
    pub list_changed: bool,
}

/// The server's resources, and what it offers around them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
pub struct ResourceCapability {
    pub subscribe: bool,
    pub list_changed: bool,
}

/// The server's capabilities as it declared them (`null` for what it did not declare).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
pub struct Capabilities {
    pub tools: Option<ListCapability>,
    pub resources: Option<ResourceCapability>,
    pub prompts: Option<ListCapability>,
    pub logging: bool,
    pub completions: bool,
    /// The tasks extension (`io.modelcontextprotocol/tasks`) of protocol 2026-07-28.
    pub tasks: bool,
    /// The names of its experimental capabilities and extensions, sorted.
    pub experimental: Vec<String>,
    pub extensions: Vec<String>,
}

impl Capabilities {
    pub fn from_rmcp(caps: &ServerCapabilities) -> Capabilities {
        let names = |map: Option<&std::collections::BTreeMap<String, _>>| -> Vec<String> {
            map.map(|m| {
                m.keys()
                    .map(|k| crate::text::sanitize_line(k, 100))
                    .collect()
            })
            .unwrap_or_default()
        };
        Capabilities {
            tools: caps.tools.as_ref().map(|t| ListCapability {
                list_changed: t.list_changed.unwrap_or(false),
            }),
            resources: caps.resources.as_ref().map(|r| ResourceCapability {
                subscribe: r.subscribe.unwrap_or(false),
                list_changed: r.list_changed.unwrap_or(false),
            }),
            prompts: caps.prompts.as_ref().map(|p| ListCapability {
                list_changed: p.list_changed.unwrap_or(false),
            }),
            logging: caps.logging.is_some(),
            completions: caps.completions.is_some(),
            tasks: caps.supports_tasks(),
            experimental: names(caps.experimental.as_ref()),
            extensions: names(caps.extensions.as_ref()),
        }
    }

    /// The capabilities in a few words, for a line on screen: `tools (list changes),
    /// resources (subscribe, list changes), prompts, logging, completions`.
    pub fn summary(&self) -> String {
        let changes = |c: &ListCapability| {
            if c.list_changed {
                " (list changes)"
            } else {
                ""
            }
        };
        let mut parts = Vec::new();
        if let Some(t) = &self.tools {
            parts.push(format!("tools{}", changes(t)));
        }
        if let Some(r) = &self.resources {
            let mut what = Vec::new();
            if r.subscribe {
                what.push("subscribe");
            }
            if r.list_changed {
                what.push("list changes");
            }
            parts.push(if what.is_empty() {
                "resources".to_string()
            } else {
                format!("resources ({})", what.join(", "))
            });
        }
        if let Some(p) = &self.prompts {
            parts.push(format!("prompts{}", changes(p)));
        }
        if self.logging {
            parts.push("logging".into());
        }
        if self.completions {
            parts.push("completions".into());
        }
        if self.tasks {
            parts.push("tasks".into());
        }
        for name in self.experimental.iter().chain(&self.extensions) {
            parts.push(name.clone());
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    }
}

/// The capabilities and the instructions (sanitized, newlines kept, bounded) the server gave
/// in its handshake.
pub fn from_peer_info(info: Option<&ServerPeerInfo>) -> (Option<Capabilities>, Option<String>) {
    match info {
        None => (None, None),
        Some(info) => (
            Some(Capabilities::from_rmcp(&info.capabilities)),
            info.instructions
                .as_deref()
                .filter(|i| !i.trim().is_empty())
                .map(|i| {
                    crate::text::truncate(&crate::text::sanitize(i, true), INSTRUCTIONS_CHARS)
                }),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_the_server_declared() {
        let caps: ServerCapabilities = serde_json::from_value(serde_json::json!({
            "tools": {"listChanged": true},
            "resources": {"subscribe": true},
            "logging": {},
            "experimental": {"x\u{1b}[2J": {}},
        }))
        .unwrap();
        let c = Capabilities::from_rmcp(&caps);
        assert_eq!(c.tools, Some(ListCapability { list_changed: true }));
        assert_eq!(
            c.resources,
            Some(ResourceCapability {
                subscribe: true,
                list_changed: false
            })
        );
        assert_eq!(c.prompts, None);
        assert!(c.logging && !c.completions && !c.tasks);
        assert_eq!(c.experimental, vec!["x"]);
        assert_eq!(
            c.summary(),
            "tools (list changes), resources (subscribe), logging, x"
        );
        assert_eq!(Capabilities::default().summary(), "none");
    }
}
