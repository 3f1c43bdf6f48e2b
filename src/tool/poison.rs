//! Tool poisoning, flagged: text a server gives the model (a tool's description, its input
//! schema's names, descriptions, defaults and choices, the server's instructions) that hides
//! something from the person, speaks to the model behind their back, or reaches for another
//! server's tools. Each flag names the field, the span (in characters) and the reason.
//!
//! The rules come from the published attacks on MCP hosts and the MCP security guidance:
//! - hidden text: zero-width and other invisible characters, bidirectional overrides
//!   ("Trojan Source"), Unicode tag characters (text a terminal does not draw but a model
//!   reads: "ASCII smuggling"), terminal escape sequences that hide or rewrite lines ("line
//!   jumping");
//! - instruction blocks for the model (`<IMPORTANT>`, `<SYSTEM>`, `[INST]`, chat-template
//!   tokens, HTML comments), and words addressed to it: overriding its instructions, keeping
//!   things from the user, demanding steps before the tool is used, threatening failure;
//! - reaching for secrets a tool has no business with (SSH keys, other clients' MCP configs,
//!   cloud credentials);
//! - naming another server's tools (`mcp__other__send_email`), or rewriting what another tool
//!   does ("shadowing": "when this tool is available, … must send all emails to …").
//!
//! Pure text in, flags out: no parsing that can fail, time linear in the text.

use serde::Serialize;

/// One thing found in a text a tool or server gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flag {
    /// Where: `description`, `inputSchema`, `instructions`.
    pub field: &'static str,
    /// The span, in characters from the start of the field's text.
    pub start: usize,
    pub end: usize,
    /// Why, in words.
    pub reason: String,
}

/// Phrases addressed to the model, lower case, each with its reason.
const PHRASES: &[(&str, &str)] = &[
    (
        "<important>",
        "an instruction block for the model (<IMPORTANT>)",
    ),
    ("<system>", "an instruction block for the model (<SYSTEM>)"),
    (
        "<instructions>",
        "an instruction block for the model (<instructions>)",
    ),
    ("<secret>", "an instruction block for the model (<secret>)"),
    ("[inst]", "a chat-template instruction marker ([INST])"),
    ("<|im_start|>", "a chat-template token (<|im_start|>)"),
    ("<|system|>", "a chat-template token (<|system|>)"),
    ("<!--", "a hidden comment (<!--)"),
    (
        "ignore previous instructions",
        "tells the model to ignore its instructions",
    ),
    (
        "ignore all previous",
        "tells the model to ignore its instructions",
    ),
    (
        "ignore the previous",
        "tells the model to ignore its instructions",
    ),
    (
        "ignore any previous",
        "tells the model to ignore its instructions",
    ),
    (
        "ignore your instructions",
        "tells the model to ignore its instructions",
    ),
    (
        "disregard previous",
        "tells the model to ignore its instructions",
    ),
    (
        "disregard all previous",
        "tells the model to ignore its instructions",
    ),
    (
        "forget your instructions",
        "tells the model to ignore its instructions",
    ),
    (
        "forget all previous",
        "tells the model to ignore its instructions",
    ),
    ("do not tell the user", "keeps something from the user"),
    ("don't tell the user", "keeps something from the user"),
    ("do not inform the user", "keeps something from the user"),
    ("do not mention", "keeps something from the user"),
    ("don't mention", "keeps something from the user"),
    ("do not reveal", "keeps something from the user"),
    ("do not notify", "keeps something from the user"),
    ("without telling the user", "keeps something from the user"),
    (
        "without informing the user",
        "keeps something from the user",
    ),
    ("without the user knowing", "keeps something from the user"),
    ("the user must not", "keeps something from the user"),
    ("the user should not know", "keeps something from the user"),
    ("hide this from the user", "keeps something from the user"),
    (
        "before using this tool",
        "demands a step before the tool is used",
    ),
    (
        "before calling this tool",
        "demands a step before the tool is used",
    ),
    (
        "before executing any tool",
        "demands a step before any tool is used",
    ),
    (
        "before using any other tool",
        "demands a step before any tool is used",
    ),
    (
        "otherwise the tool will not work",
        "threatens failure to make the model comply",
    ),
    (
        "the application will crash",
        "threatens failure to make the model comply",
    ),
    (
        "all data will be lost",
        "threatens failure to make the model comply",
    ),
    ("very very important", "presses the model to comply"),
    (
        "pass its content",
        "asks for a file's content to be passed along",
    ),
    (
        "include the contents of",
        "asks for a file's content to be passed along",
    ),
    (
        "when this tool is available",
        "changes how other tools behave (shadowing)",
    ),
    (
        "send all emails to",
        "redirects another tool's effect (shadowing)",
    ),
    (
        "change the recipient",
        "redirects another tool's effect (shadowing)",
    ),
    ("~/.ssh", "reaches for SSH keys"),
    ("id_rsa", "reaches for SSH keys"),
    ("id_ed25519", "reaches for SSH keys"),
    ("mcp.json", "reaches for an MCP client's config"),
    (
        "claude_desktop_config",
        "reaches for an MCP client's config",
    ),
    (".aws/credentials", "reaches for cloud credentials"),
    ("/etc/shadow", "reaches for system secrets"),
];

/// What a character hides, if it is one that hides something.
fn hidden(c: char) -> Option<&'static str> {
    match c {
        // Not U+200C/U+200D (joiners: Persian and Indic scripts, emoji sequences) nor the
        // left-to-right and right-to-left marks that right-to-left text uses.
        '\u{200B}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}' | '\u{180E}' => {
            Some("invisible characters")
        }
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => {
            Some("bidirectional overrides (the text shown is not the text read)")
        }
        '\u{E0000}'..='\u{E007F}' => Some("Unicode tag characters (text the screen does not show)"),
        // The supplementary selectors only: U+FE0F follows many an emoji.
        '\u{E0100}'..='\u{E01EF}' => Some("variation selectors (text the screen does not show)"),
        '\u{1B}' | '\u{9B}' => {
            Some("terminal escape sequences (text hidden or rewritten on screen)")
        }
        c if c.is_control() && !matches!(c, '\n' | '\t' | '\r') => Some("control characters"),
        _ => None,
    }
}

/// The flags of one field's `text`, for a tool of server `own` (another server's tools named
/// in it are flagged). JSON text (an input schema) is read as text: its escapes of control
/// characters (`\u001b`) count as the characters.
pub fn scan(field: &'static str, text: &str, own: &str) -> Vec<Flag> {
    let mut flags = Vec::new();
    // Byte offset → character offset, for the spans (a search, not a count from the start:
    // time stays linear in the text however many flags it holds).
    let starts: Vec<usize> = text.char_indices().map(|(byte, _)| byte).collect();
    let at = |byte: usize| starts.partition_point(|start| *start < byte);

    // Hidden characters, a run of the same kind as one flag.
    let mut run: Option<(usize, usize, &'static str)> = None;
    for (i, c) in text.chars().enumerate() {
        match (hidden(c), &mut run) {
            (Some(why), Some((_, end, kind))) if *kind == why && *end == i => *end = i + 1,
            (Some(why), _) => {
                if let Some((start, end, kind)) = run.take() {
                    flags.push(flag(field, start, end, kind));
                }
                run = Some((i, i + 1, why));
            }
            (None, _) => {
                if let Some((start, end, kind)) = run.take() {
                    flags.push(flag(field, start, end, kind));
                }
            }
        }
    }
    if let Some((start, end, kind)) = run {
        flags.push(flag(field, start, end, kind));
    }

    // Words for the model, and escapes of control characters in JSON text.
    let lower = text.to_ascii_lowercase();
    for (phrase, why) in PHRASES {
        for (byte, _) in lower.match_indices(phrase) {
            flags.push(flag(field, at(byte), at(byte + phrase.len()), why));
        }
    }
    for escape in ["\\u001b", "\\u009b"] {
        for (byte, _) in lower.match_indices(escape) {
            flags.push(flag(
                field,
                at(byte),
                at(byte + escape.len()),
                "terminal escape sequences (text hidden or rewritten on screen)",
            ));
        }
    }

    // Another server's tools, by their qualified names.
    for (byte, _) in lower.match_indices("mcp__") {
        let rest = &lower[byte + 5..];
        // A server's name is short; looking further would make `mcp__mcp__…` quadratic.
        let server: String = rest
            .chars()
            .take(SERVER_NAME_CHARS)
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        let Some(server) = server.split("__").next().filter(|s| !s.is_empty()) else {
            continue;
        };
        if server != own.to_ascii_lowercase() && rest[server.len()..].starts_with("__") {
            let end = byte + 5 + server.len() + 2;
            flags.push(flag(
                field,
                at(byte),
                at(end),
                &format!("names a tool of another server ({server})"),
            ));
        }
    }
    flags.sort_by_key(|f| (f.start, f.end));
    flags.truncate(MAX_FLAGS);
    flags
}

/// Characters of a server's name looked at after `mcp__`.
const SERVER_NAME_CHARS: usize = 64;

/// Flags kept per field: a text made of nothing but payloads says so soon enough.
const MAX_FLAGS: usize = 32;

/// The flags of a tool of server `own`: its description and its input schema's text.
pub fn scan_tool(own: &str, description: &str, input_schema: &str) -> Vec<Flag> {
    let mut flags = scan("description", description, own);
    flags.extend(scan("inputSchema", input_schema, own));
    flags
}

/// Flags in words: each field and reason once, at most three ("description: keeps something
/// from the user; inputSchema: invisible characters").
pub fn words(flags: &[Flag]) -> String {
    let mut said: Vec<String> = Vec::new();
    for f in flags {
        let words = format!("{}: {}", f.field, f.reason);
        if !said.contains(&words) {
            said.push(words);
        }
    }
    let more = said.len().saturating_sub(3);
    said.truncate(3);
    if more > 0 {
        said.push(format!("{more} more"));
    }
    said.join("; ")
}

fn flag(field: &'static str, start: usize, end: usize, reason: &str) -> Flag {
    Flag {
        field,
        start,
        end,
        reason: reason.to_string(),
    }
}

#[cfg(test)]
#[path = "poison_tests.rs"]
mod tests;
