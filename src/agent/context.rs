//! What a conversation costs in context: token estimates (about four bytes a token, marked `~`
//! wherever they are shown; the endpoint's own counts replace them when it gives them), a tool
//! result cut to its head and tail for the model, and when the history must be compacted.
//!
//! Pure functions of the conversation's items: the loop decides, this measures.

use super::turn::{Item, ToolSpec};
use crate::tool::ToolDescriptor;

/// Bytes per token of the estimates.
pub const BYTES_PER_TOKEN: usize = 4;

/// The estimated tokens of `bytes` bytes of text or JSON.
pub fn tokens(bytes: usize) -> u64 {
    u64::try_from(bytes.div_ceil(BYTES_PER_TOKEN)).unwrap_or(u64::MAX)
}

/// The estimated tokens of one item as a request carries it (its text, its calls, a little for
/// the framing around them).
pub fn item_tokens(item: &Item) -> u64 {
    let bytes = match item {
        Item::User { text } | Item::ToolResult { text, .. } => text.len(),
        Item::Assistant {
            text,
            reasoning,
            calls,
        } => {
            text.len()
                + reasoning
                    .iter()
                    .map(|r| r.state.to_string().len())
                    .sum::<usize>()
                + calls
                    .iter()
                    .map(|c| c.id.len() + c.name.len() + c.arguments.len() + 32)
                    .sum::<usize>()
        }
    };
    tokens(bytes + 16)
}

/// The estimated tokens of one tool's definition (its name, description and schema).
pub fn tool_tokens(spec: &ToolSpec) -> u64 {
    tokens(spec.name.len() + spec.description.len() + spec.parameters.to_string().len() + 32)
}

/// A request split into its parts (estimated tokens): the system prompt, the tool
/// definitions by server (`local` for the console's own), the history, and of it the latest
/// prompt's tool results.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Breakdown {
    pub system_prompt: u64,
    pub tools_by_server: std::collections::BTreeMap<String, u64>,
    pub tools: u64,
    pub history: u64,
    pub latest_results: u64,
    pub total: u64,
}

/// The breakdown of a request with `system`, the registry's `tools` and `items`.
pub fn breakdown(system: &str, tools: &[ToolDescriptor], items: &[Item]) -> Breakdown {
    let mut by_server = std::collections::BTreeMap::new();
    for tool in tools {
        let spec = ToolSpec {
            name: tool.name.clone(),
            description: tool.description.clone(),
            parameters: tool.input_schema.to_value(),
        };
        let server = tool.origin.as_ref().map_or("local", |o| o.server.as_str());
        *by_server.entry(server.to_string()).or_insert(0) += tool_tokens(&spec);
    }
    let tools: u64 = by_server.values().sum();
    let history: u64 = items.iter().map(item_tokens).sum();
    let latest = items
        .iter()
        .rposition(|i| matches!(i, Item::User { .. }))
        .map_or(0, |at| at + 1);
    let latest_results = items[latest.min(items.len())..]
        .iter()
        .filter(|i| matches!(i, Item::ToolResult { .. }))
        .map(item_tokens)
        .sum();
    let system_prompt = tokens(system.len());
    Breakdown {
        system_prompt,
        tools_by_server: by_server,
        tools,
        history,
        latest_results,
        total: system_prompt + tools + history,
    }
}

/// What a page of `read_result` needs besides its text (its closing note).
const PAGE_NOTE_ROOM: usize = 200;

/// `text` cut to `max` bytes for the model: its head (two thirds) and tail (one third), with a
/// line between that says how much was left out and, when the whole was kept as result `id`,
/// how to read it (`read_result`).
pub fn cut_result(text: &str, max: usize, id: Option<&str>) -> String {
    let mut head = max * 2 / 3;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len().saturating_sub(max - head).max(head);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    let left = tail - head;
    // Pages that fit the same budget, their own note included.
    let page = max.saturating_sub(PAGE_NOTE_ROOM).max(1);
    let how = match id {
        Some(id) => format!(
            "{} {{\"id\": \"{id}\", \"offset\": {head}, \"limit\": {page}}} reads them",
            crate::tool::local::read_result::NAME
        ),
        None => "they could not be kept".to_string(),
    };
    format!(
        "{}\n[… {left} bytes (~{} tokens) of this result left out; {how}]\n{}",
        &text[..head],
        tokens(left),
        &text[tail..]
    )
}

/// How a summary starts where it stands in for the turns it replaced.
pub const SUMMARY_HEADING: &str = "[A summary of the conversation before this point, made when \
it grew too long for the model's context window]";

/// The items that stand in for the turns a summary replaced: the summary as the user's, and
/// the model's acknowledgement (the next prompt must not follow a user message).
pub fn summary_items(summary: &str) -> Vec<Item> {
    vec![
        Item::User {
            text: format!("{SUMMARY_HEADING}\n{summary}"),
        },
        Item::assistant(
            "Understood: I will go on from this summary.".into(),
            Vec::new(),
            Vec::new(),
        ),
    ]
}

/// Where compaction keeps the conversation from: the current prompt (the last user item) and
/// what followed it; `None` when there is nothing before it to summarise.
pub fn compaction_start(items: &[Item]) -> Option<usize> {
    let last_user = items.iter().rposition(|i| matches!(i, Item::User { .. }))?;
    (last_user > 0).then_some(last_user)
}

/// The items as plain text for the summary request, at most `max` bytes (their end kept:
/// the latest turns matter most).
pub fn as_text(items: &[Item], max: usize) -> String {
    let mut out = String::new();
    for item in items {
        match item {
            Item::User { text } => out.push_str(&format!("User: {text}\n")),
            Item::Assistant { text, calls, .. } => {
                if !text.is_empty() {
                    out.push_str(&format!("Assistant: {text}\n"));
                }
                for call in calls {
                    out.push_str(&format!(
                        "Assistant called {} with {}\n",
                        call.name, call.arguments
                    ));
                }
            }
            Item::ToolResult { text, .. } => out.push_str(&format!("Tool result: {text}\n")),
        }
    }
    if out.len() > max {
        let mut start = out.len() - max;
        while !out.is_char_boundary(start) {
            start += 1;
        }
        out.replace_range(..start, "");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_result_keeps_its_head_and_tail_and_says_how_to_read_the_rest() {
        let text = format!(
            "{}{}{}",
            "h".repeat(600),
            "m".repeat(10_000),
            "t".repeat(300)
        );
        let cut = cut_result(&text, 900, Some("s-t1-c1"));
        assert!(cut.starts_with(&"h".repeat(600)), "{cut}");
        assert!(cut.ends_with(&"t".repeat(300)), "{cut}");
        assert!(
            cut.contains("[… 10000 bytes (~2500 tokens) of this result left out; read_result {\"id\": \"s-t1-c1\", \"offset\": 600, \"limit\": 700} reads them]"),
            "{cut}"
        );
        // Multi-byte characters at both cuts.
        let wide = "語".repeat(1000);
        let cut = cut_result(&wide, 100, None);
        assert!(cut.contains("could not be kept"));
    }

    #[test]
    fn compaction_keeps_the_current_prompt_and_what_followed() {
        let user = |t: &str| Item::User { text: t.into() };
        let items = vec![
            user("a"),
            Item::assistant("b".into(), Vec::new(), Vec::new()),
            user("c"),
            Item::ToolResult {
                call_id: "x".into(),
                text: "r".into(),
            },
        ];
        assert_eq!(compaction_start(&items), Some(2));
        assert_eq!(compaction_start(&items[2..]), None);
        assert_eq!(as_text(&items[..2], 1000), "User: a\nAssistant: b\n");
        assert_eq!(as_text(&items[..2], 12), "Assistant: b\n"[1..]);
    }
}
