//! Fuzz target: a `tools/list` page of arbitrary entries, read entry by entry (`read_page`).
//! What must hold: never a panic; every entry is either kept (it reads as a tool by itself) or
//! skipped with a line that names it; the tools kept are the entries that read as tools, in
//! their order; a page that is not a page is left to the general read.
#![no_main]

use aimon_console::mcp::transport::tool_page::read_page;
use libfuzzer_sys::fuzz_target;
use serde_json::value::RawValue;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The input as a whole page, and its lines as the entries of one (so that short inputs
    // reach entries that are almost tools).
    check(text);
    let entries: Vec<&str> = text
        .lines()
        .filter(|l| serde_json::from_str::<Value>(l).is_ok())
        .collect();
    check(&format!(r#"{{"tools":[{}],"nextCursor":"n"}}"#, entries.join(",")));
});

fn check(page: &str) {
    let Ok(raw) = serde_json::from_str::<Box<RawValue>>(page) else {
        return;
    };
    let Some(read) = read_page(&raw) else {
        return;
    };
    // Each entry as written (a key given twice is an error for a tool, as in rmcp's own read).
    #[derive(serde::Deserialize)]
    struct Entries {
        tools: Vec<Box<RawValue>>,
    }
    let entries = serde_json::from_str::<Entries>(page)
        .expect("a page has a tools array")
        .tools;
    let tools: Vec<Value> = entries
        .iter()
        .filter(|e| serde_json::from_str::<rmcp::model::Tool>(e.get()).is_ok())
        .map(|e| serde_json::from_str(e.get()).expect("an entry is JSON"))
        .collect();
    assert!(read.page.tools.is_empty(), "the tools are beside the page");
    let kept = &read.entries.tools;
    assert_eq!(kept.len() + read.entries.skipped.len(), entries.len());
    assert_eq!(kept.len(), tools.len());
    for (kept, entry) in kept.iter().zip(&tools) {
        assert_eq!(Some(kept.name.as_str()), entry["name"].as_str());
        // The schema kept as text is the entry's schema.
        assert_eq!(kept.input_schema.to_value(), entry["inputSchema"]);
    }
    for line in &read.entries.skipped {
        assert!(line.contains(" skipped: "), "{line}");
        assert!(!line.chars().any(char::is_control), "{line:?}");
    }
}
