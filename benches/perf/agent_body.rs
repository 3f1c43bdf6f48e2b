//! The request body of a model turn for a long conversation with many tools: the product's
//! (`History` and `ToolList`: each item, and the tool list, encoded once when first sent)
//! beside the bare loop's (the whole history and tool list serialized for every request, as a
//! plain client does), in Chat Completions' form.

use std::time::Instant;

use aimon_console::agent::providers::openai_chat::request_body;
use aimon_console::agent::providers::RequestOptions;
use aimon_console::agent::turn::{History, Item, ToolCall, ToolChoice, ToolList, ToolSpec};
use serde_json::{json, Value};

use crate::report::{CallStats, Row};

/// A Chat Completions message as a plain client writes it.
#[derive(serde::Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum BareMessage {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        content: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<BareCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

impl BareMessage {
    /// The messages of a conversation: the system prompt, then each item.
    pub fn of(system: &str, items: &[Item]) -> Vec<BareMessage> {
        let mut out = vec![BareMessage::System {
            content: system.into(),
        }];
        out.extend(items.iter().map(|item| match item {
            Item::User { text } => BareMessage::User {
                content: text.clone(),
            },
            Item::Assistant { text, calls, .. } => BareMessage::Assistant {
                content: text.clone(),
                tool_calls: calls.iter().map(BareCall::of).collect(),
            },
            Item::ToolResult { call_id, text } => BareMessage::Tool {
                tool_call_id: call_id.clone(),
                content: text.clone(),
            },
        }));
        out
    }
}

/// A tool call as a plain client writes it.
#[derive(serde::Serialize)]
pub struct BareCall {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    function: BareFunction,
}

#[derive(serde::Serialize)]
struct BareFunction {
    name: String,
    arguments: String,
}

impl BareCall {
    pub fn of(call: &ToolCall) -> BareCall {
        BareCall {
            id: call.id.clone(),
            kind: "function",
            function: BareFunction {
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            },
        }
    }
}

/// The bare loop's request body: serialized whole from its messages and tools every turn, as a
/// plain client does (the product encodes each item once, see `History`). The same bytes as
/// the product's body.
pub fn bare_body(
    messages: &[BareMessage],
    tools: &[ToolSpec],
    choice: ToolChoice,
    options: &RequestOptions,
) -> std::io::Result<Vec<u8>> {
    #[derive(serde::Serialize)]
    struct Function<'a> {
        name: &'a str,
        description: &'a str,
        parameters: &'a Value,
    }
    #[derive(serde::Serialize)]
    struct Tool<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        function: Function<'a>,
    }
    #[derive(serde::Serialize)]
    struct Body<'a> {
        model: &'a str,
        messages: &'a [BareMessage],
        stream: bool,
        tools: Vec<Tool<'a>>,
        tool_choice: &'static str,
    }
    let body = Body {
        model: &options.model,
        messages,
        stream: false,
        tools: tools
            .iter()
            .map(|t| Tool {
                kind: "function",
                function: Function {
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.parameters,
                },
            })
            .collect(),
        tool_choice: match choice {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
        },
    };
    serde_json::to_vec(&body).map_err(std::io::Error::other)
}

/// The system prompt of the body bench.
const SYSTEM: &str = "You are an operator's agent. Mutating calls wait for the operator.";

/// `rounds` rounds of a tool call and its result after a prompt.
fn conversation(rounds: usize) -> Vec<Item> {
    let mut items = vec![Item::User {
        text: "Go through the open tickets and summarise each.".into(),
    }];
    for round in 0..rounds {
        items.push(Item::assistant(
            format!("Reading ticket {round} next, then I will summarise it."),
            Vec::new(),
            vec![ToolCall {
                id: format!("call_{round}"),
                name: "mcp__tickets__read_ticket".into(),
                arguments: format!("{{\"id\":{round},\"with_comments\":true}}"),
            }],
        ));
        items.push(Item::ToolResult {
            call_id: format!("call_{round}"),
            text: format!(
                "Ticket {round}: \"Login fails after the update\". Status open, 3 comments: \
                 seen on two machines; a restart does not help; logs attached."
            ),
        });
    }
    items
}

/// `count` tools of a few servers, each with a schema of four properties.
fn tools(count: usize) -> Vec<ToolSpec> {
    (0..count)
        .map(|i| ToolSpec {
            name: format!("mcp__server{}__tool_{i}", i % 8),
            description: format!("Does thing {i}: reads or changes the items it is given."),
            parameters: json!({
                "type": "object",
                "properties": {
                    "id": {"type": "integer", "description": "The item's id."},
                    "query": {"type": "string", "description": "What to look for."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                    "with_comments": {"type": "boolean", "default": false}
                },
                "required": ["id"]
            }),
        })
        .collect()
}

/// The body of a request with 50 rounds of history and 100 tools, `n` times each way.
pub fn rows(n: usize) -> Vec<Row> {
    let (items, specs) = (conversation(50), tools(100));
    let messages = BareMessage::of(SYSTEM, &items);
    let options = RequestOptions {
        model: "demo".into(),
        stream: false,
        temperature: None,
        max_tokens: None,
    };
    let (held, offered) = (
        History::new(Some(SYSTEM.into()), items),
        ToolList::new(specs.clone()),
    );
    let mut bodies = (Vec::new(), Vec::new());
    let t = Instant::now();
    for _ in 0..n {
        match bare_body(&messages, &specs, ToolChoice::Auto, &options) {
            Ok(b) => bodies.0 = b,
            Err(e) => panic!("body: {e}"),
        }
    }
    let whole = CallStats::new(n, t.elapsed(), Vec::new());
    let t = Instant::now();
    for _ in 0..n {
        bodies.1 = request_body(&held, &offered, ToolChoice::Auto, &options);
    }
    let ours = CallStats::new(n, t.elapsed(), Vec::new());
    assert!(bodies.0 == bodies.1, "the two bodies differ");
    let parsed: Value = match serde_json::from_slice(&bodies.1) {
        Ok(v) => v,
        Err(e) => panic!("the body is not JSON: {e}"),
    };
    assert_eq!(parsed["tools"].as_array().map(Vec::len), Some(100));
    vec![Row::new(
        "agent",
        &format!(
            "request body: 50-round history, 100 tools ({} KiB)",
            bodies.1.len() / 1024
        ),
        "bodies/s",
        ours.per_sec(),
    )
    .against("serialized whole for each request", whole.per_sec())]
}
