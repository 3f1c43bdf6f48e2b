//! Tool search: when every tool definition would take more than the profile's `tool_search`
//! share of the context window (or always, with `tool_search: always`), the model is offered
//! `search_tools` and the tools it found instead of every definition. What it finds stays
//! offered for the rest of the conversation. The search itself reads the registry only; the
//! tools it finds are called through the gate like any other, their traits unchanged.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::super::context::tool_tokens;
use super::super::events::ToolCallStatus;
use super::super::turn::ToolSpec;
use super::{CallResult, Conversation};
use crate::config::ToolSearch;
use crate::tool::local::read_result;

/// The name of the search tool the model is offered.
pub const SEARCH_TOOLS: &str = "search_tools";

/// The most tools one search returns.
const MAX_FOUND: usize = 8;

/// The search tool as the model sees it.
fn search_spec() -> ToolSpec {
    ToolSpec {
        name: SEARCH_TOOLS.into(),
        description: "Find the tools you need: only the tools found so far are offered. Search by \
                      what a tool does, its name or its server; the tools found are offered from \
                      your next turn on."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {"query": {"type": "string", "description": "Words to look for."}},
            "required": ["query"]
        }),
    }
}

impl Conversation {
    /// The tools offered this turn out of `all`: every one, or (tool search on) the search
    /// tool and the tools found so far; `read_result` only while the prompt has had a result
    /// cut for the model (there is nothing for it to read before).
    pub(super) fn offer(&self, mut all: Vec<ToolSpec>) -> Vec<ToolSpec> {
        if !self.cut_in_prompt {
            all.retain(|t| t.name != read_result::NAME);
        }
        let total: u64 = all.iter().map(tool_tokens).sum();
        let window = self.settings.context_window.map(u64::from);
        let search = match self.settings.tool_search {
            ToolSearch::Off => false,
            ToolSearch::Always => true,
            ToolSearch::Auto(percent) => {
                window.is_some_and(|w| total.saturating_mul(100) > w * u64::from(percent))
            }
        };
        if !search {
            return all;
        }
        let found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        // `read_result` stays offered: a cut result's note says to call it.
        let mut offered: Vec<ToolSpec> = all
            .into_iter()
            .filter(|t| found.contains(&t.name) || t.name == read_result::NAME)
            .collect();
        offered.push(search_spec());
        offered
    }

    /// How many tools the model has found (the offer is made again when it grows).
    pub(super) fn found_count(&self) -> usize {
        self.found.lock().map_or(0, |f| f.len())
    }

    /// A `search_tools` call: the registry's tools (those that can be called) whose name,
    /// server or description hold the most of the query's words; they are offered from the
    /// next turn on.
    pub(super) fn search_tools(&self, arguments: &str) -> CallResult {
        let query = serde_json::from_str::<Value>(arguments)
            .ok()
            .and_then(|v| v["query"].as_str().map(str::to_lowercase))
            .unwrap_or_default();
        let words: Vec<&str> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 1)
            .collect();
        if words.is_empty() {
            return CallResult {
                status: ToolCallStatus::BadArguments,
                content: "error: give `query`: words of what the tool does, its name or its server"
                    .into(),
                outcome: None,
            };
        }
        let snapshot = self.runtime.tool_snapshot();
        let mut scored: Vec<(usize, String, String)> = snapshot
            .values()
            .filter(|t| t.unavailable().is_none())
            .filter_map(|t| {
                let d = t.descriptor();
                let haystack = format!("{} {}", d.name, d.description).to_lowercase();
                let score = words.iter().filter(|w| haystack.contains(**w)).count();
                (score > 0).then(|| {
                    let line = d.description.lines().next().unwrap_or("").to_string();
                    (score, d.name.clone(), line)
                })
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        scored.truncate(MAX_FOUND);
        if scored.is_empty() {
            return CallResult {
                status: ToolCallStatus::Ok,
                content: format!(
                    "no tool matches {query:?}: try other words (what the tool does, its name or its server)"
                ),
                outcome: None,
            };
        }
        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        let mut text = format!(
            "found {} tool(s), offered from your next turn on:",
            scored.len()
        );
        for (_, name, line) in &scored {
            found.insert(name.clone());
            text.push_str(&format!("\n- {name}: {line}"));
        }
        CallResult {
            status: ToolCallStatus::Ok,
            content: text,
            outcome: None,
        }
    }
}

/// The tools found so far (a turn's calls search side by side).
pub(super) type Found = std::sync::Mutex<BTreeSet<String>>;
