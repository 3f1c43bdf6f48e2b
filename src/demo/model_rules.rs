//! What the demo model answers: fixed, documented rules over the last prompt (save a note →
//! a `write_note` tool; "what is A plus B" → `add`), a replayed script, or the tool-call faults.
//!
//! Pure functions of the conversation (read from any wire by `model_wires/`), apart from the
//! HTTP server in `model.rs`: the model keeps no state, so every answer follows from the
//! conversation it is sent, as a real one's does.

use serde::Deserialize;
use serde_json::{json, Value};

/// The tool `--invent-tool` calls, which no server has.
pub const INVENTED_TOOL: &str = "mcp__nowhere__launch_rockets";

/// The arguments `--bad-arguments` sends: not JSON.
pub const BAD_ARGUMENTS: &str = "{\"title\": \"unfinished";

/// How the demo model introduces itself when no rule applies.
pub const HELP: &str = "(demo model) I am the built-in demo model: I answer by fixed rules, not by understanding. \
Ask me to \"save a note called NAME saying TEXT\" (I call a write_note tool, which waits for your approval) \
or \"what is 2 plus 3\" (I call add, which is read-only and runs at once).";

/// One turn of a `--script` file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptTurn {
    /// Text to stream (before the tool calls, if any).
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub tool_calls: Vec<ScriptCall>,
}

/// A tool call of a script turn. `name` is a tool's exact name, or the end of one
/// (`write_note` matches `mcp__notes__write_note`); `arguments` is JSON, or a string sent as is
/// (to send arguments that are not JSON).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptCall {
    pub name: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    json!({})
}

/// Behaviour switches of the rules.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rules {
    /// Replay these turns: answer number N of a conversation (counting every assistant message
    /// it holds) is turn N; past the end, the rules apply.
    pub script: Option<Vec<ScriptTurn>>,
    /// Among tools of the same name, prefer this server's (`mcp__SERVER__…`).
    pub prefer_server: Option<String>,
    /// The first answer to each prompt calls [`INVENTED_TOOL`].
    pub invent_tool: bool,
    /// The first answer to each prompt sends [`BAD_ARGUMENTS`].
    pub bad_arguments: bool,
    /// Every answer calls `echo` (or the first tool), even when asked to answer without tools
    /// (`tool_choice: "none"`): the model never stops.
    pub loop_tools: bool,
    /// An answer no rule gives (the introduction) is this many words long instead: a long
    /// stream to watch, cancel and measure.
    pub long_answer: Option<usize>,
    /// Each answer carries reasoning (a thinking block, a reasoning item) that a later request
    /// must send back with it.
    pub reasoning: bool,
}

/// One answer: text and tool calls (name, arguments as sent).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answer {
    pub text: String,
    pub calls: Vec<(String, String)>,
    /// The number of this answer's first call among the conversation's calls: its calls'
    /// ids go on from the ids before (an SDK refuses an id used twice).
    pub first_call: usize,
    /// Cut at the request's `max_tokens` (finish reason `length`).
    pub cut: bool,
}

impl Answer {
    fn say(text: impl Into<String>) -> Answer {
        Answer {
            text: text.into(),
            ..Answer::default()
        }
    }

    fn call(text: impl Into<String>, name: String, arguments: String) -> Answer {
        Answer {
            text: text.into(),
            calls: vec![(name, arguments)],
            ..Answer::default()
        }
    }

    /// Stops at `max_tokens` (four bytes a token, as the usage counts), as a model does: a
    /// text longer than that is cut there, its calls left out, and the answer is marked cut.
    pub fn limit(&mut self, max_tokens: Option<u64>) {
        let Some(max) = max_tokens.and_then(|m| usize::try_from(m.saturating_mul(4)).ok()) else {
            return;
        };
        if self.text.len() <= max {
            return;
        }
        let mut end = max;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        self.text.truncate(end);
        self.calls.clear();
        self.cut = true;
    }
}

/// What a prompt asks for.
#[derive(Debug, Clone, PartialEq)]
enum Intent {
    SaveNote {
        title: String,
        body: String,
    },
    Add {
        a: f64,
        b: f64,
    },
    /// "wait N seconds": the `slow` tool for that long (tenths of a second, one step each).
    Wait {
        seconds: f64,
    },
}

impl Intent {
    fn tool(&self) -> &'static str {
        match self {
            Intent::SaveNote { .. } => "write_note",
            Intent::Add { .. } => "add",
            Intent::Wait { .. } => "slow",
        }
    }

    fn arguments(&self) -> Value {
        match self {
            Intent::SaveNote { title, body } => json!({"title": title, "body": body}),
            Intent::Add { a, b } => json!({"a": number(*a), "b": number(*b)}),
            Intent::Wait { seconds } => {
                json!({"steps": ((seconds * 10.0).round() as u64).max(1), "step_ms": 100})
            }
        }
    }

    fn saying(&self) -> String {
        match self {
            Intent::SaveNote { title, .. } => format!("I will save the note \"{title}\"."),
            Intent::Add { a, b } => format!("I will add {} and {}.", number(*a), number(*b)),
            Intent::Wait { seconds } => format!("I will wait {} seconds.", number(*seconds)),
        }
    }
}

/// An integral number as an integer (`2`, not `2.0`).
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// A message's text: a string, or the text parts of a list of parts (every wire allows both,
/// for user and tool messages alike).
pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// What the operator typed: the prompt without the resources attached to it (`<resource …>`
/// blocks), whose text is material, not orders.
fn typed_part(prompt: &str) -> String {
    let mut out = String::new();
    let mut rest = prompt;
    while let Some(open) = rest.find("<resource ") {
        out.push_str(&rest[..open]);
        match rest[open..].find("</resource>") {
            Some(close) => rest = &rest[open + close + "</resource>".len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out.trim().to_string()
}

/// Who said something in a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    /// A tool call's result.
    Tool,
}

/// One message of a conversation, whichever wire brought it: its text, and the calls of an
/// answer (name, arguments as written).
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    pub role: Role,
    pub text: String,
    pub calls: Vec<(String, String)>,
}

/// A request as the rules read it, whichever wire it came in (`model_wires/`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Talk {
    pub messages: Vec<Said>,
    /// The names of the tools on offer.
    pub tools: Vec<String>,
    /// Asked to answer in words (tool choice none).
    pub words_only: bool,
}

/// The answer to a conversation.
pub fn answer(talk: &Talk, rules: &Rules) -> Answer {
    let mut reply = answer_calls(talk, rules);
    reply.first_call = talk.messages.iter().map(|m| m.calls.len()).sum();
    reply
}

fn answer_calls(talk: &Talk, rules: &Rules) -> Answer {
    let messages = &talk.messages;
    let tools = &talk.tools;
    let answered = messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .count();
    if let Some(turn) = rules.script.as_ref().and_then(|s| s.get(answered)) {
        return Answer {
            cut: false,
            first_call: 0,
            text: turn.text.clone(),
            calls: turn
                .tool_calls
                .iter()
                .map(|c| {
                    let name = resolve(tools, &c.name, rules.prefer_server.as_deref())
                        .unwrap_or_else(|| c.name.clone());
                    let arguments = match &c.arguments {
                        Value::String(raw) => raw.clone(),
                        other => other.to_string(),
                    };
                    (name, arguments)
                })
                .collect(),
        };
    }
    let last_user = messages.iter().rposition(|m| m.role == Role::User);
    let prompt = last_user
        .map(|i| typed_part(&messages[i].text))
        .unwrap_or_default();
    let since: &[Said] = match last_user {
        Some(i) => &messages[i + 1..],
        None => &[],
    };
    let steps = since.iter().filter(|m| m.role == Role::Assistant).count();
    if rules.loop_tools {
        let name = resolve(tools, "echo", rules.prefer_server.as_deref())
            .or_else(|| tools.first().cloned())
            .unwrap_or_else(|| "echo".into());
        return Answer::call(
            format!("(demo model) Calling a tool again (round {}).", steps + 1),
            name,
            json!({"text": format!("round {}", steps + 1)}).to_string(),
        );
    }
    if talk.words_only {
        return Answer::say(match intent(&prompt) {
            Some(intent) => format!(
                "(demo model) I was asked to answer without tools, so I did not call {}.",
                intent.tool()
            ),
            None => HELP.to_string(),
        });
    }
    if rules.invent_tool && steps == 0 {
        return Answer::call(
            "(demo model) Let me use a tool I just made up.",
            INVENTED_TOOL.to_string(),
            "{}".into(),
        );
    }
    if let Some(next) = read_on(&prompt, since, tools) {
        return next;
    }
    let Some(intent) = intent(&prompt) else {
        return match since.last() {
            Some(m) if m.role == Role::Tool => {
                Answer::say(format!("(demo model) The call came back: {}", m.text))
            }
            _ => Answer::say(match rules.long_answer {
                Some(words) => long_answer(words),
                None => HELP.to_string(),
            }),
        };
    };
    let Some(tool) = resolve(tools, intent.tool(), rules.prefer_server.as_deref()) else {
        // Offered a search instead of every tool: look for it, once.
        if let Some(search) = resolve(tools, "search_tools", None) {
            let searched = since
                .iter()
                .any(|m| m.calls.iter().any(|(name, _)| *name == search));
            if !searched {
                return Answer::call(
                    format!("(demo model) Looking for a {} tool.", intent.tool()),
                    search,
                    json!({"query": intent.tool()}).to_string(),
                );
            }
        }
        return Answer::say(format!(
            "(demo model) I would call a {} tool, but none is on offer.",
            intent.tool()
        ));
    };
    // Done once a call of that tool with JSON arguments got its result.
    let called = since.iter().any(|m| {
        m.calls.iter().any(|(name, arguments)| {
            *name == tool && serde_json::from_str::<Value>(arguments).is_ok()
        })
    });
    if !called {
        let arguments = if rules.bad_arguments && steps == 0 {
            BAD_ARGUMENTS.to_string()
        } else {
            intent.arguments().to_string()
        };
        return Answer::call(format!("(demo model) {}", intent.saying()), tool, arguments);
    }
    let result = since
        .iter()
        .rev()
        .find(|m| m.role == Role::Tool)
        .map(|m| m.text.as_str())
        .unwrap_or_default();
    let failed = ["error", "not run", "cancelled"]
        .iter()
        .any(|w| result.starts_with(w));
    if failed {
        return Answer::say(format!("(demo model) That did not work: {result}"));
    }
    Answer::say(match intent {
        Intent::SaveNote { .. } => format!("(demo model) Done: {result}."),
        Intent::Add { a, b } => {
            format!("(demo model) {} plus {} is {result}.", number(a), number(b))
        }
        Intent::Wait { .. } => format!("(demo model) Done waiting: {result}."),
    })
}

/// A result the model was sent cut, when the prompt asks for the whole of it: the next page,
/// through `read_result` (the arguments its note gives), until a page says it is the end.
fn read_on(prompt: &str, since: &[Said], tools: &[String]) -> Option<Answer> {
    let lower = prompt.to_ascii_lowercase();
    if !(lower.contains("whole") || lower.contains("all of it")) {
        return None;
    }
    let last = since.last().filter(|m| m.role == Role::Tool)?;
    let tool = resolve(tools, "read_result", None)?;
    let note = &last.text[last.text.rfind("read_result {")? + "read_result ".len()..];
    let arguments: Value = serde_json::Deserializer::from_str(note)
        .into_iter::<Value>()
        .next()?
        .ok()?;
    Some(Answer::call(
        "(demo model) Reading more of the result.",
        tool,
        arguments.to_string(),
    ))
}

/// The tool named `wanted`, or ending in `__wanted`; `prefer`'s first among several.
fn resolve(tools: &[String], wanted: &str, prefer: Option<&str>) -> Option<String> {
    let suffix = format!("__{wanted}");
    let matching: Vec<&String> = tools
        .iter()
        .filter(|t| *t == wanted || t.ends_with(&suffix))
        .collect();
    let preferred = prefer.and_then(|server| {
        let prefix = format!("mcp__{server}__");
        matching.iter().find(|t| t.starts_with(&prefix)).copied()
    });
    preferred.or(matching.first().copied()).cloned()
}

/// `(demo model)` and `words` words of filler, a line break every twelve.
pub fn long_answer(words: usize) -> String {
    const WORDS: [&str; 12] = [
        "this", "is", "a", "long", "answer", "from", "the", "demo", "model,", "word", "by", "word",
    ];
    let mut text = String::from("(demo model)");
    for i in 0..words {
        text.push(if i % 12 == 0 { '\n' } else { ' ' });
        text.push_str(WORDS[i % WORDS.len()]);
    }
    text
}

/// What `prompt` asks for, by the documented rules.
fn intent(prompt: &str) -> Option<Intent> {
    let lower = prompt.to_ascii_lowercase();
    if lower.contains("note") && (lower.contains("save") || lower.contains("write")) {
        let title = after_any(prompt, &lower, &["called ", "titled ", "named "])
            .map(|rest| {
                let end = [" saying", " that says", " with", ":", ","]
                    .iter()
                    .filter_map(|stop| rest.to_ascii_lowercase().find(stop))
                    .min()
                    .unwrap_or(rest.len());
                unquote(&rest[..end])
            })
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "note".to_string());
        let body = after_any(
            prompt,
            &lower,
            &[
                "saying ",
                "that says ",
                "with the text ",
                "with body ",
                ": ",
            ],
        )
        .map(unquote)
        .unwrap_or_default();
        return Some(Intent::SaveNote { title, body });
    }
    if let Some(rest) = after_any(prompt, &lower, &["wait "]) {
        let seconds = rest
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<f64>().ok())
            .filter(|n| n.is_finite() && *n > 0.0 && *n <= 3600.0);
        if let Some(seconds) = seconds {
            return Some(Intent::Wait { seconds });
        }
    }
    let rest = after_any(prompt, &lower, &["what is ", "what's "])?;
    let rest = rest.trim_end_matches(['?', '.', '!', ' ']);
    let (a, b) = rest.split_once(" plus ").or_else(|| rest.split_once('+'))?;
    Some(Intent::Add {
        a: a.trim().parse().ok()?,
        b: b.trim().parse().ok()?,
    })
}

/// The text of `original` after the first of `markers` found in `lower` (its ASCII lowercase,
/// so the offsets agree).
fn after_any<'a>(original: &'a str, lower: &str, markers: &[&str]) -> Option<&'a str> {
    markers
        .iter()
        .filter_map(|m| lower.find(m).map(|at| at + m.len()))
        .min()
        .and_then(|at| original.get(at..))
}

fn unquote(s: &str) -> String {
    s.trim()
        .trim_end_matches(['.', '!'])
        .trim_matches(['"', '\'', '“', '”'])
        .trim()
        .to_string()
}

#[cfg(test)]
#[path = "model_rules_tests.rs"]
mod tests;
