//! One `tools/list` listing gathered over its pages: each tool name held once (the first entry
//! of a name wins; a second is skipped and named), and the entries the reader skipped as
//! malformed said alongside, so the server's warnings name every tool that is not offered and
//! its tool count is the number of tools it really has.
//!
//! Separate from `client.rs` so the rules are plain code, tested without a server.

use std::collections::HashSet;

use crate::mcp::listed::ListedTool;
use crate::mcp::transport::tool_page::PageEntries;

/// Most skipped entries named one by one in the warnings; the rest are counted.
const NAMED_LIMIT: usize = 20;

/// A listing in progress.
#[derive(Default)]
pub(super) struct Listing {
    tools: Vec<ListedTool>,
    names: HashSet<String>,
    /// Entries seen so far, over all pages (for "entry N of the listing").
    seen: usize,
    skipped: Vec<String>,
}

impl Listing {
    /// Adds one page's entries: its tools, and those the reader skipped (already in words).
    pub(super) fn add_page(&mut self, entries: PageEntries) {
        let PageEntries { tools, skipped } = entries;
        self.skipped.extend(skipped);
        self.tools.reserve(tools.len());
        for tool in tools {
            self.seen += 1;
            if self.names.insert(tool.name.to_string()) {
                self.tools.push(tool);
            } else {
                self.skipped.push(format!(
                    "tool {:?} (entry {} of the listing) skipped: the name is listed twice; the first is kept",
                    crate::text::sanitize_line(&tool.name, 64),
                    self.seen
                ));
            }
        }
    }

    /// The tools, and the warnings (one per skipped entry, up to a limit, then a count).
    pub(super) fn finish(self) -> (Vec<ListedTool>, Vec<String>) {
        let mut warnings = self.skipped;
        if warnings.len() > NAMED_LIMIT {
            let more = warnings.len() - NAMED_LIMIT;
            for warning in &warnings[NAMED_LIMIT..] {
                tracing::warn!(%warning, "tool entry skipped");
            }
            warnings.truncate(NAMED_LIMIT);
            warnings.push(format!(
                "{more} more tool entr{} skipped (see the log)",
                if more == 1 { "y" } else { "ies" }
            ));
        }
        (self.tools, warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> ListedTool {
        let tool: rmcp::model::Tool = serde_json::from_value(serde_json::json!({
            "name": name, "description": description, "inputSchema": {}
        }))
        .expect("a tool");
        tool.into()
    }

    fn page(tools: Vec<ListedTool>, skipped: Vec<String>) -> PageEntries {
        PageEntries { tools, skipped }
    }

    #[test]
    fn the_first_of_a_name_wins_and_the_second_is_named() {
        let mut listing = Listing::default();
        listing.add_page(page(vec![tool("a", "first"), tool("b", "")], Vec::new()));
        listing.add_page(page(
            vec![tool("a", "second"), tool("c", "")],
            vec!["tool \"x\" (entry 2 of the page) skipped: it has no inputSchema".into()],
        ));
        let (tools, warnings) = listing.finish();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(tools[0].description, "first");
        assert_eq!(
            warnings,
            [
                "tool \"x\" (entry 2 of the page) skipped: it has no inputSchema",
                "tool \"a\" (entry 3 of the listing) skipped: the name is listed twice; the first is kept",
            ]
        );
    }

    #[test]
    fn many_skipped_entries_are_counted_past_a_limit() {
        let mut listing = Listing::default();
        let tools = (0..30).map(|_| tool("same", "")).collect();
        listing.add_page(page(tools, Vec::new()));
        let (tools, warnings) = listing.finish();
        assert_eq!(tools.len(), 1);
        assert_eq!(warnings.len(), NAMED_LIMIT + 1);
        assert_eq!(
            warnings[NAMED_LIMIT],
            "9 more tool entries skipped (see the log)"
        );
    }
}
