//! A `tools/list` page read entry by entry: a tool whose entry is malformed (no `inputSchema`,
//! one that is a string or an array, no name, not an object…) is skipped and named, and the
//! rest of the page is kept. rmcp reads a page whole, so one bad entry would lose every tool.
//!
//! Each entry is made a compact `ListedTool` as soon as it is read (its schema as text), so a
//! page is never held parsed whole: rmcp is handed the page without its tools, and the tools
//! wait for the client beside it (`StdoutIssues::tool_page`).
//!
//! Separate from the line reader because it is the one place that knows what a tool entry
//! must hold; the fuzz target `tool_pages` feeds it arbitrary pages.

use rmcp::model::{ListToolsResult, Tool};

use crate::mcp::listed::ListedTool;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Characters of a tool name quoted in a warning.
const NAME_CHARS: usize = 64;

/// A page read leniently: the page without its tools (its cursor and the rest, for rmcp), and
/// its entries.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolPage {
    /// The page; its `tools` are left empty (they are in `entries`).
    pub page: ListToolsResult,
    pub entries: PageEntries,
}

/// The entries of a page: the tools that could be read, in their order, and one line per
/// entry that could not.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PageEntries {
    pub tools: Vec<ListedTool>,
    pub skipped: Vec<String>,
}

/// The `result` of a `tools/list` answer, with its entries left unread.
#[derive(Deserialize)]
struct RawPage<'a> {
    #[serde(borrow)]
    tools: Vec<&'a RawValue>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

/// Reads a `tools/list` result entry by entry. `None` when it is not a page at all (no `tools`
/// array, or its other fields are wrong): the caller then reads it the general way.
pub fn read_page(result: &RawValue) -> Option<ToolPage> {
    let raw: RawPage<'_> = serde_json::from_str(result.get()).ok()?;
    let mut rest = raw.rest;
    rest.insert("tools".into(), Value::Array(Vec::new()));
    let page: ListToolsResult = serde_json::from_value(Value::Object(rest)).ok()?;
    let mut entries = PageEntries {
        tools: Vec::with_capacity(raw.tools.len()),
        skipped: Vec::new(),
    };
    for (index, entry) in raw.tools.iter().enumerate() {
        match serde_json::from_str::<Tool>(entry.get()) {
            Ok(tool) => entries.tools.push(ListedTool::from(tool)),
            Err(e) => entries.skipped.push(describe(index, entry, &e)),
        }
    }
    Some(ToolPage { page, entries })
}

/// One skipped entry in words: which (its name where it has one, always its place in the
/// page) and why.
fn describe(index: usize, entry: &RawValue, err: &serde_json::Error) -> String {
    let value: Value = serde_json::from_str(entry.get()).unwrap_or(Value::Null);
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .map(|n| format!("tool {:?} ", crate::text::sanitize_line(n, NAME_CHARS)))
        .unwrap_or_default();
    let why = match &value {
        Value::Object(fields) => match (fields.get("name"), fields.get("inputSchema")) {
            (None, _) => "it has no name".to_string(),
            (Some(n), _) if !n.is_string() => format!("its name is {}", kind(n)),
            (_, None) => "it has no inputSchema".to_string(),
            (_, Some(s)) if !s.is_object() => format!("its inputSchema is {}", kind(s)),
            _ => crate::text::sanitize_line(&err.to_string(), 200),
        },
        other => format!("it is {}, not an object", kind(other)),
    };
    format!("{name}(entry {} of the page) skipped: {why}", index + 1)
}

/// What kind of JSON value `v` is, with an article.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(json: &str) -> Option<ToolPage> {
        let raw: Box<RawValue> = serde_json::from_str(json).expect("json");
        read_page(&raw)
    }

    #[test]
    fn bad_entries_are_skipped_and_named_the_rest_kept() {
        let read = page(
            r#"{"tools":[
                {"name":"good","inputSchema":{"type":"object"}},
                {"name":"no_schema"},
                {"name":"string_schema","inputSchema":"object"},
                {"name":"array_schema","inputSchema":[]},
                {"inputSchema":{"type":"object"}},
                {"name":7,"inputSchema":{}},
                "just a string",
                {"name":"bad_hint","inputSchema":{},"annotations":{"readOnlyHint":"yes"}},
                {"name":"also_good","inputSchema":{}}
            ],"nextCursor":"c2"}"#,
        )
        .expect("a page");
        let names: Vec<&str> = read.entries.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["good", "also_good"]);
        assert!(read.page.tools.is_empty());
        assert_eq!(read.page.next_cursor.as_deref(), Some("c2"));
        assert_eq!(
            read.entries.skipped[..6],
            [
                "tool \"no_schema\" (entry 2 of the page) skipped: it has no inputSchema",
                "tool \"string_schema\" (entry 3 of the page) skipped: its inputSchema is a string",
                "tool \"array_schema\" (entry 4 of the page) skipped: its inputSchema is an array",
                "(entry 5 of the page) skipped: it has no name",
                "(entry 6 of the page) skipped: its name is a number",
                "(entry 7 of the page) skipped: it is a string, not an object",
            ]
        );
        assert!(read.entries.skipped[6]
            .starts_with("tool \"bad_hint\" (entry 8 of the page) skipped: "));
    }

    #[test]
    fn a_name_is_quoted_safely() {
        let read = page(r#"{"tools":[{"name":"\u001b]0;x\u0007evil"}]}"#).expect("a page");
        assert!(
            !read.entries.skipped[0].contains('\u{1b}'),
            "{:?}",
            read.entries.skipped
        );
    }

    #[test]
    fn what_is_not_a_page_is_left_to_the_general_read() {
        assert!(page(r#"{"content":[]}"#).is_none());
        assert!(page(r#"{"tools":{}}"#).is_none());
        assert!(page(r#"{"tools":[],"nextCursor":5}"#).is_none());
        assert!(page(r#"[]"#).is_none());
        let empty = page(r#"{"tools":[]}"#).expect("an empty page");
        assert_eq!(empty.entries, PageEntries::default());
    }

    #[test]
    fn a_good_page_reads_as_rmcp_reads_it() {
        let json = r#"{"tools":[{"name":"a","description":"d","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}},"annotations":{"readOnlyHint":true}}],"nextCursor":"n","_meta":{"k":1}}"#;
        let ours = page(json).expect("a page");
        let mut theirs: ListToolsResult = serde_json::from_str(json).expect("rmcp reads it");
        let tools: Vec<ListedTool> = theirs.tools.drain(..).map(ListedTool::from).collect();
        assert_eq!(ours.page, theirs);
        assert_eq!(ours.entries.tools, tools);
        // The schema's text keeps the server's order.
        assert_eq!(
            ours.entries.tools[0].input_schema.as_str(),
            r#"{"type":"object","properties":{"x":{"type":"string"}}}"#
        );
        assert!(ours.entries.skipped.is_empty());
    }
}
