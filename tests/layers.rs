//! The architecture as a test (docs/ARCHITECTURE.md §2): dependencies point down only; the
//! runtime is the one door (nothing in `tui/`, `cli/` or `agent/` names `crate::mcp`); and no
//! two files inside `mcp/`, `runtime/`, `tui/` or `config/` import each other in a circle.
//! Reads every source file whole, leaving out only comments and the items marked
//! `#[cfg(test)]` (and the test modules they declare): every path a file names (`use`
//! declarations and paths in code) is resolved to the module file it lands in.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every module of `src/`, by its path (`mcp::manager::launch`), with its source text.
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut modules = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&src).expect("under src");
        let mut parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        let text = std::fs::read_to_string(&file).expect("read file");
        modules.insert(parts.join("::"), text);
    }
    modules
}

/// The modules that are test code: those a parent declares under `#[cfg(test)]` (`mod tests;`,
/// `mod load_tests;`), and everything below them.
fn test_modules(modules: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut tests = BTreeSet::new();
    for (name, text) in modules {
        let mut rest = text.as_str();
        while let Some(at) = rest.find("#[cfg(test)]") {
            rest = &rest[at + "#[cfg(test)]".len()..];
            let item = rest.trim_start();
            let item = item.strip_prefix("pub(in crate::tui) ").unwrap_or(item);
            let item = item.strip_prefix("pub(crate) ").unwrap_or(item);
            if let Some(decl) = item.strip_prefix("mod ") {
                let child: String = decl
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let path = if name.is_empty() {
                    child
                } else {
                    format!("{name}::{child}")
                };
                tests.insert(path);
            }
        }
    }
    tests
}

/// Whether `module` is test code (see [`test_modules`]).
fn is_test(module: &str, tests: &BTreeSet<String>) -> bool {
    tests
        .iter()
        .any(|t| module == t || module.starts_with(&format!("{t}::")))
}

/// The code of a whole file without its comments and without the items marked `#[cfg(test)]`
/// (an inline test module, a test-only function or import: a test may reach anywhere). Every
/// other line is read, after a test module as well as before it.
fn code(text: &str) -> String {
    let uncommented: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = String::with_capacity(uncommented.len());
    let mut rest = uncommented.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        rest = &rest[at + "#[cfg(test)]".len()..];
        // The item marked ends at its first `;` outside braces, or with its closing brace.
        let mut depth = 0usize;
        let mut end = rest.len();
        for (i, c) in rest.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    // `pub(in crate::tui)` is a visibility, not a path the file uses.
    while let Some(at) = out.find("pub(in ") {
        let close = out[at..].find(')').map_or(out.len(), |c| at + c + 1);
        out.replace_range(at..close, "pub");
    }
    out
}

/// Paths a file names: `crate::a::b`, `super::x`, `self::y`, with `use` groups expanded.
fn named_paths(code: &str) -> Vec<String> {
    fn expand(prefix: &str, group: &str, out: &mut Vec<String>) {
        let mut depth = 0;
        let mut start = 0;
        let bytes: Vec<char> = group.chars().collect();
        let mut items = Vec::new();
        for (i, c) in bytes.iter().enumerate() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(bytes[start..i].iter().collect::<String>());
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(bytes[start..].iter().collect::<String>());
        for item in items {
            let item: String = item.split_whitespace().collect();
            if item.is_empty() {
                continue;
            }
            match item.find("::{") {
                Some(at) if item.ends_with('}') => {
                    let inner = &item[at + 3..item.len() - 1];
                    expand(&format!("{prefix}::{}", &item[..at]), inner, out);
                }
                _ => out.push(format!("{prefix}::{item}")),
            }
        }
    }
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let text: String = chars.iter().collect();
    for root in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = text[from..].find(root) {
            let begin = from + at;
            from = begin + root.len();
            // Not the tail of a longer identifier (`my_crate::`).
            if begin > 0 {
                let before = text[..begin].chars().last().unwrap_or(' ');
                if before.is_alphanumeric() || before == '_' || before == ':' {
                    continue;
                }
            }
            let rest = &text[begin..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '{'))
                .unwrap_or(rest.len());
            let path = &rest[..end];
            if let Some(open) = path.find("::{") {
                // A `use` group: up to its matching brace.
                let group_start = begin + open + 3;
                let mut depth = 1;
                let mut close = group_start;
                for (i, c) in text[group_start..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                close = group_start + i;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                expand(&path[..open], &text[group_start..close], &mut out);
            } else {
                out.push(path.trim_end_matches(':').to_string());
            }
        }
    }
    out
}

/// The module a path lands in, from module `at`: the longest prefix that is a module file.
fn resolve(at: &str, path: &str, modules: &BTreeMap<String, String>) -> Option<String> {
    let mut segments: Vec<&str> = Vec::new();
    let mut parts = path.split("::").filter(|s| !s.is_empty()).peekable();
    let mut base: Vec<&str> = at.split("::").filter(|s| !s.is_empty()).collect();
    match parts.peek().copied() {
        Some("crate") => {
            parts.next();
        }
        Some("self") | Some("super") => {
            // A file's `self` is the module itself.
            while let Some(&p) = parts.peek() {
                match p {
                    "self" => {
                        parts.next();
                    }
                    "super" => {
                        parts.next();
                        base.pop();
                    }
                    _ => break,
                }
            }
            segments.extend(base);
        }
        _ => return None,
    }
    segments.extend(parts);
    (0..=segments.len())
        .rev()
        .map(|n| segments[..n].join("::"))
        .find(|m| modules.contains_key(m))
        .filter(|m| !m.is_empty())
}

/// Edges between modules: who names whom (outside test code).
fn edges(modules: &BTreeMap<String, String>) -> BTreeSet<(String, String)> {
    let tests = test_modules(modules);
    let mut edges = BTreeSet::new();
    for (name, text) in modules {
        if is_test(name, &tests) {
            continue;
        }
        for path in named_paths(&code(text)) {
            if let Some(to) = resolve(name, &path, modules) {
                if &to != name && !is_test(&to, &tests) {
                    edges.insert((name.clone(), to));
                }
            }
        }
    }
    edges
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or("")
}

#[test]
fn the_runtime_is_the_one_door() {
    let modules = modules();
    let mut offenders = Vec::new();
    let tests = test_modules(&modules);
    for (name, text) in &modules {
        if is_test(name, &tests) {
            continue;
        }
        if matches!(top(name), "tui" | "cli" | "agent" | "telemetry" | "daemon")
            && code(text).contains("crate::mcp")
        {
            offenders.push(name.clone());
        }
    }
    assert!(
        offenders.is_empty(),
        "these modules above the runtime name crate::mcp: {offenders:?}"
    );
}

#[test]
fn dependencies_point_down_only() {
    // Lower number, lower layer. `demo` stands beside `mcp` (only the CLI reaches it); `text`
    // and `config` are the floor, with `sandbox` (what a child process may do, read from the
    // config) beside it: both `tool` (bash) and `mcp` (stdio servers) spawn sandboxed.
    let rank = |m: &str| -> Option<u8> {
        Some(match top(m) {
            "text" => 0,
            "config" | "sandbox" => 1,
            "tool" => 2,
            "approval" => 3,
            "mcp" | "demo" => 4,
            "runtime" => 5,
            "telemetry" => 6,
            "agent" => 7,
            "daemon" => 8,
            "tui" | "cli" => 9,
            "" => return None,
            _ => 3,
        })
    };
    let modules = modules();
    let mut upward = Vec::new();
    for (from, to) in edges(&modules) {
        if let (Some(a), Some(b)) = (rank(&from), rank(&to)) {
            if b > a {
                upward.push(format!("{from} -> {to}"));
            }
        }
    }
    assert!(upward.is_empty(), "arrows pointing up: {upward:#?}");
}

#[test]
fn no_circles_inside_a_layer() {
    let modules = modules();
    let edges = edges(&modules);
    let inside = |m: &str| matches!(top(m), "mcp" | "runtime" | "tui" | "config");
    let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in &edges {
        if inside(from) && inside(to) && top(from) == top(to) {
            graph.entry(from).or_default().push(to);
        }
    }
    // Any path that comes back to where it started is a circle.
    let mut circles = Vec::new();
    for start in graph.keys() {
        let mut stack = vec![(*start, vec![*start])];
        let mut seen = BTreeSet::new();
        while let Some((node, path)) = stack.pop() {
            for next in graph.get(node).into_iter().flatten() {
                if next == start {
                    circles.push(path.join(" -> ") + " -> " + start);
                } else if seen.insert(*next) {
                    let mut longer = path.clone();
                    longer.push(next);
                    stack.push((next, longer));
                }
            }
        }
    }
    assert!(circles.is_empty(), "import circles: {circles:#?}");
}

#[test]
fn the_graph_is_read_at_all() {
    // The checks above are only worth something if the reader sees the imports it should.
    let modules = modules();
    let edges = edges(&modules);
    for (from, to) in [
        ("runtime::lifecycle", "mcp::manager"),
        ("mcp::manager::launch", "mcp::manager::join"),
        ("tui::app", "runtime"),
        ("mcp::start::remote", "mcp::start::starter"),
        // Named after the file's first `#[cfg(test)]`: the whole file is read.
        ("tui", "tui::frame"),
    ] {
        assert!(
            edges.contains(&(from.to_string(), to.to_string())),
            "{from} -> {to} not seen"
        );
    }
}

#[test]
fn no_source_file_is_over_600_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    let mut stack: Vec<_> = ["src", "tests", "benches", "fuzz/fuzz_targets"]
        .iter()
        .map(|dir| root.join(dir))
        .collect();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read a source folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let lines = std::fs::read_to_string(&path)
                    .expect("read")
                    .lines()
                    .count();
                if lines > 600 {
                    long.push(format!("{} ({lines} lines)", path.display()));
                }
            }
        }
    }
    assert!(long.is_empty(), "split along a seam: {long:#?}");
}

#[test]
fn the_console_app_holds_only_what_is_shared() {
    // Each pane's own state is in `panes`, the views over the panes in `overlays`: `App` keeps
    // what they share, at most 15 fields.
    let modules = modules();
    let app = &modules["tui::app"];
    let start = app.find("pub struct App {").expect("struct App");
    let body = &app[start..start + app[start..].find("\n}").expect("end of App")];
    let fields: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("pub(super) ") && l.contains(':'))
        .collect();
    assert!(!fields.is_empty(), "no field of App read");
    assert!(
        fields.len() <= 15,
        "App has {} fields: {fields:#?}",
        fields.len()
    );
}

#[test]
fn no_module_outside_the_providers_names_a_wire_field() {
    // The model APIs' own field names (Chat Completions, Anthropic's Messages, OpenAI's
    // Responses), named as fields: a JSON key (`"name":`), an index (`["name"]`), a lookup
    // (`("name")`) or a serde name (`= "name"`). Only `agent/providers/` maps the wires; the
    // demo model (`demo/`) is their other side. The neutral words the rest of the program uses
    // (`input_tokens`, `call_id`, `stop`, `length`) are the program's own.
    const WIRE_FIELDS: &[&str] = &[
        "tool_calls",
        "tool_call_id",
        "finish_reason",
        "prompt_tokens",
        "completion_tokens",
        "prompt_tokens_details",
        "stream_options",
        "tool_choice",
        "choices",
        "delta",
        "tool_use",
        "tool_use_id",
        "tool_result",
        "input_schema",
        "stop_reason",
        "cache_control",
        "cache_read_input_tokens",
        "content_block",
        "partial_json",
        "anthropic-version",
        "x-api-key",
        "function_call",
        "function_call_output",
        "output_text",
        "max_output_tokens",
        "encrypted_content",
        "input_tokens_details",
    ];
    let modules = modules();
    let mut named = Vec::new();
    for (name, text) in &modules {
        if name.starts_with("agent::providers") || top(name) == "demo" {
            continue;
        }
        // Test code too (only comments are left out).
        let code: String = text
            .lines()
            .map(|l| l.find("//").map_or(l, |at| &l[..at]))
            .collect::<Vec<_>>()
            .join("\n");
        for field in WIRE_FIELDS {
            let quoted = format!("\"{field}\"");
            for form in [
                format!("{quoted}:"),
                format!("[{quoted}]"),
                format!("({quoted})"),
                format!("= {quoted}"),
            ] {
                if code.contains(&form) {
                    named.push(format!("{name}: {form}"));
                }
            }
        }
    }
    assert!(
        named.is_empty(),
        "wire fields named outside agent/providers/: {named:#?}"
    );
    // The check sees what it should: the providers do name them.
    assert!(modules["agent::providers::anthropic"].contains("\"tool_use\""));
}
