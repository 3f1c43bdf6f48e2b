//! What a connection's reader noticed that the client must hear about: lines on stdout that
//! were not messages (for the server's warnings), answers that could not be read (each failing
//! the request it answered, with why), and tool entries skipped from a `tools/list` page.
//!
//! Shared between the stdio reader (`lines.rs`), which fills it, and the client, which takes
//! from it; separate from both so neither owns the other's half.

use std::collections::{HashMap, VecDeque};

use rmcp::model::RequestId;

use super::tool_page::PageEntries;
use super::unreadable::MAX_LINE_BYTES;
use crate::text::plural;

/// Most entries kept by request id before the oldest are forgotten (requests abandoned on a
/// deadline never come to take theirs).
const BY_ID_LIMIT: usize = 1024;
/// Most `tools/list` pages kept for the client (see `StdoutIssues::tool_pages`). A page is
/// taken the moment its request is answered, so only abandoned ones ever wait here.
const PAGES_KEPT: usize = 8;

/// What went wrong on a server's stdout, kept for warnings and failure messages.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct StdoutIssues {
    /// Lines that were not JSON.
    pub not_json: u64,
    /// The first such line, quoted and sanitized.
    pub first_not_json: Option<String>,
    /// JSON lines that were not JSON-RPC messages.
    pub not_a_message: u64,
    pub first_not_a_message: Option<String>,
    /// Lines over `MAX_LINE_BYTES` that were not answers, dropped.
    pub oversized: u64,
    pub largest_oversized: usize,
    /// Answers that could not be read (each failed the request it answered, or every pending
    /// request when it named none).
    pub unreadable: u64,
    /// The first of them, in words, with a quote of its first bytes.
    pub first_unreadable: Option<String>,
    /// Why a request failed on an unreadable answer, by its id, until the client takes it.
    failed: HashMap<RequestId, String>,
    /// The entries of `tools/list` pages (the tools, kept compact, and those skipped), by the
    /// id of the request each answered, until the client takes them; the oldest first, at most
    /// `PAGES_KEPT` (an abandoned request never takes its page).
    tool_pages: VecDeque<(RequestId, PageEntries)>,
}

impl StdoutIssues {
    /// One warning per kind of problem, in words an operator can act on.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(first) = &self.first_not_json {
            out.push(format!(
                "{} non-JSON line{} on stdout (a server must write only JSON-RPC there), first: {first}",
                self.not_json,
                plural(self.not_json)
            ));
        }
        if let Some(first) = &self.first_not_a_message {
            out.push(format!(
                "{} JSON line{} on stdout that {} not JSON-RPC messages, first: {first}",
                self.not_a_message,
                plural(self.not_a_message),
                if self.not_a_message == 1 { "is" } else { "are" }
            ));
        }
        if self.oversized > 0 {
            out.push(format!(
                "{} line{} over the {} MiB frame limit dropped (largest {} bytes)",
                self.oversized,
                plural(self.oversized),
                MAX_LINE_BYTES / (1024 * 1024),
                self.largest_oversized
            ));
        }
        if let Some(first) = &self.first_unreadable {
            out.push(format!(
                "{} answer{} could not be read, first: {first}",
                self.unreadable,
                plural(self.unreadable)
            ));
        }
        out
    }

    /// Notes that request `id` failed on an unreadable answer, and why.
    pub fn fail(&mut self, id: RequestId, why: String) {
        bounded_insert(&mut self.failed, id, why);
    }

    /// Why request `id` failed on an unreadable answer, if it did (once).
    pub fn take_failed(&mut self, id: &RequestId) -> Option<String> {
        self.failed.remove(id)
    }

    /// Whether request `id` failed on an unreadable answer (not taking it).
    pub fn is_failed(&self, id: &RequestId) -> bool {
        self.failed.contains_key(id)
    }

    /// Why any request failed on an unreadable answer (the handshake's, whose id rmcp keeps).
    pub fn take_any_failed(&mut self) -> Option<String> {
        let id = self.failed.keys().next().cloned()?;
        self.failed.remove(&id)
    }

    /// Keeps the entries of the page that answered request `id` for the client.
    pub fn tool_page(&mut self, id: RequestId, entries: PageEntries) {
        if self.tool_pages.len() >= PAGES_KEPT {
            self.tool_pages.pop_front();
        }
        self.tool_pages.push_back((id, entries));
    }

    /// The entries of the page that answered request `id` (once); `None` when no page was read
    /// for it here (an answer rmcp read itself carries its tools).
    pub fn take_tool_page(&mut self, id: &RequestId) -> Option<PageEntries> {
        let at = self.tool_pages.iter().position(|(held, _)| held == id)?;
        self.tool_pages.remove(at).map(|(_, entries)| entries)
    }
}

fn bounded_insert<V>(map: &mut HashMap<RequestId, V>, id: RequestId, value: V) {
    if map.len() >= BY_ID_LIMIT {
        map.clear();
    }
    map.insert(id, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_and_skipped_entries_are_taken_once_and_stay_bounded() {
        let mut issues = StdoutIssues::default();
        issues.fail(RequestId::Number(3), "why".into());
        assert_eq!(issues.take_failed(&RequestId::Number(4)), None);
        assert_eq!(
            issues.take_failed(&RequestId::Number(3)).as_deref(),
            Some("why")
        );
        assert_eq!(issues.take_failed(&RequestId::Number(3)), None);
        let entries = PageEntries {
            tools: Vec::new(),
            skipped: vec!["entry #2".into()],
        };
        issues.tool_page(RequestId::Number(5), entries.clone());
        assert_eq!(issues.take_tool_page(&RequestId::Number(5)), Some(entries));
        assert_eq!(issues.take_tool_page(&RequestId::Number(5)), None);
        for n in 0..(PAGES_KEPT as i64 * 3) {
            issues.tool_page(RequestId::Number(n), PageEntries::default());
        }
        assert_eq!(issues.tool_pages.len(), PAGES_KEPT);
        let last = RequestId::Number(PAGES_KEPT as i64 * 3 - 1);
        assert!(issues.take_tool_page(&last).is_some(), "the newest is kept");
        for n in 0..(BY_ID_LIMIT as i64 * 3) {
            issues.fail(RequestId::Number(n), String::new());
        }
        assert!(issues.failed.len() <= BY_ID_LIMIT);
    }

    #[test]
    fn unreadable_answers_are_a_warning_of_their_own() {
        let issues = StdoutIssues {
            unreadable: 2,
            first_unreadable: Some("request 3 (tools/call): invalid UTF-8 at byte 9".into()),
            ..StdoutIssues::default()
        };
        assert_eq!(
            issues.warnings(),
            vec!["2 answers could not be read, first: request 3 (tools/call): invalid UTF-8 at byte 9"]
        );
    }
}
