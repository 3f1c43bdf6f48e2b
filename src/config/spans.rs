//! A location index over a YAML text: for each node path (`mcp.servers[2].name`) where its key
//! and its value start and end.
//!
//! Separate from `load.rs` because serde_yaml exposes no spans, and because this index is a
//! general tool: loading uses it to put `file:line:col` on semantic errors, and the trust
//! write-back uses it to find one value and rewrite it in place, comments untouched.

use std::collections::BTreeMap;

use saphyr_parser::{Event, Marker, Parser};

/// A place in the text: 1-based line and column (columns count characters), and the byte
/// offset from the start of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// 0-based byte offset into the text.
    pub offset: usize,
}

/// Where one node sits in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeSpan {
    /// The start of the mapping key naming this node; `None` for sequence items and the root.
    pub key: Option<Position>,
    /// The first character of the value (for a quoted scalar, its opening quote).
    pub start: Position,
    /// Just past the value (exclusive). For a block collection this may be the start of the
    /// next line or of the next node, as the parser reports it.
    pub end: Position,
}

/// A YAML syntax error, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub position: Position,
    pub message: String,
}

/// The location index of the first document of a YAML text.
///
/// Paths: the root is `""`; a mapping entry is `parent.key` (just `key` at the root); a sequence
/// item is `parent[i]`. Keys are used verbatim, so a key containing `.` or `[` makes an ambiguous
/// path; the schema has none. When a key repeats in one mapping, the first occurrence is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spans {
    nodes: BTreeMap<String, NodeSpan>,
}

impl Spans {
    /// Parse `text` once and index every node of its first document.
    pub fn parse(text: &str) -> Result<Spans, SyntaxError> {
        let lines = LineIndex::new(text);
        let mut builder = Builder::default();
        let mut parser = Parser::new_from_str(text);
        while let Some(next) = parser.next_event() {
            let (event, span) = next.map_err(|e| SyntaxError {
                position: lines.position(e.marker()),
                message: e.info().to_string(),
            })?;
            let start = lines.position(&span.start);
            // A flow collection ends at its closing bracket; the parser's span of that token
            // runs on over a comment after it.
            let closes_flow = matches!(event, Event::MappingEnd | Event::SequenceEnd)
                && matches!(text.as_bytes().get(start.offset), Some(b']' | b'}'));
            let end = if closes_flow {
                Position {
                    line: start.line,
                    column: start.column + 1,
                    offset: start.offset + 1,
                }
            } else {
                lines.position(&span.end)
            };
            builder.on_event(&event, start, end);
        }
        Ok(Spans {
            nodes: builder.nodes,
        })
    }

    /// Everything known about the node at `path`.
    pub fn get(&self, path: &str) -> Option<&NodeSpan> {
        self.nodes.get(path)
    }

    /// 1-based `(line, column)` of the value at `path`.
    pub fn lookup(&self, path: &str) -> Option<(usize, usize)> {
        self.nodes
            .get(path)
            .map(|node| (node.start.line, node.start.column))
    }

    /// Where the value at `path` starts.
    pub fn value(&self, path: &str) -> Option<Position> {
        self.nodes.get(path).map(|node| node.start)
    }

    /// Where the key naming the node at `path` starts (`None` for sequence items and the root).
    pub fn key(&self, path: &str) -> Option<Position> {
        self.nodes.get(path).and_then(|node| node.key)
    }

    /// Every indexed path with its span, in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &NodeSpan)> {
        self.nodes.iter().map(|(path, node)| (path.as_str(), node))
    }
}

/// Join a mapping key onto a parent path.
pub fn child_path(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// Join a sequence index onto a parent path.
pub fn index_path(parent: &str, index: usize) -> String {
    format!("{parent}[{index}]")
}

/// Turns the parser's character-based markers into positions with byte offsets.
struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset of the start of each line.
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.char_indices()
                .filter(|&(_, c)| c == '\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { text, line_starts }
    }

    /// `marker` has a 1-based line and a 0-based column in characters.
    fn position(&self, marker: &Marker) -> Position {
        let line = marker.line().max(1);
        let column = marker.col() + 1;
        let start = self
            .line_starts
            .get(line - 1)
            .copied()
            .unwrap_or(self.text.len());
        let rest = self.text.get(start..).unwrap_or("");
        let within = rest
            .char_indices()
            .nth(marker.col())
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        Position {
            line,
            column,
            offset: start + within,
        }
    }
}

/// One open collection while walking the event stream.
enum Frame {
    Mapping {
        path: String,
        /// The key just read, waiting for its value: its text (None for a complex key) and start.
        pending_key: Option<(Option<String>, Position)>,
    },
    Sequence {
        path: String,
        next_index: usize,
    },
    /// Inside a complex (non-scalar) key: nothing indexed until it closes.
    Skip {
        depth: usize,
    },
}

/// What a node turned out to be, given where it sits.
enum Role {
    /// A value, indexed under this path.
    Value(String),
    /// A complex (non-scalar) mapping key: its contents are not indexed.
    ComplexKey,
    /// A scalar key, or a node outside the first document or inside a complex key.
    Other,
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    nodes: BTreeMap<String, NodeSpan>,
    /// Set once the first document has ended; later documents are not indexed.
    done: bool,
    in_document: bool,
}

impl Builder {
    fn on_event(&mut self, event: &Event<'_>, start: Position, end: Position) {
        match event {
            Event::DocumentStart(_) => self.in_document = !self.done,
            Event::DocumentEnd => {
                if self.in_document {
                    self.done = true;
                }
                self.in_document = false;
            }
            Event::Scalar(value, ..) => {
                self.on_node(Some(value.as_ref()), start, end);
            }
            Event::Alias(_) => {
                self.on_node(None, start, end);
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let frame = match self.on_node(None, start, start) {
                    Role::Value(path) if matches!(event, Event::MappingStart(..)) => {
                        Frame::Mapping {
                            path,
                            pending_key: None,
                        }
                    }
                    Role::Value(path) => Frame::Sequence {
                        path,
                        next_index: 0,
                    },
                    Role::ComplexKey => Frame::Skip { depth: 1 },
                    Role::Other => {
                        if let Some(Frame::Skip { depth }) = self.stack.last_mut() {
                            *depth += 1;
                        }
                        return;
                    }
                };
                self.stack.push(frame);
            }
            Event::MappingEnd | Event::SequenceEnd => {
                if !self.in_document {
                    return;
                }
                match self.stack.last_mut() {
                    Some(Frame::Skip { depth }) if *depth > 1 => *depth -= 1,
                    Some(Frame::Skip { .. }) => {
                        self.stack.pop();
                    }
                    Some(Frame::Mapping { path, .. }) | Some(Frame::Sequence { path, .. }) => {
                        if let Some(node) = self.nodes.get_mut(path.as_str()) {
                            node.end = end.max(node.start);
                        }
                        self.stack.pop();
                    }
                    None => {}
                }
            }
            Event::Nothing | Event::StreamStart | Event::StreamEnd => {}
        }
    }

    /// Place a node (`scalar` is its text when it is a scalar) and index it if it is a value.
    fn on_node(&mut self, scalar: Option<&str>, start: Position, end: Position) -> Role {
        if !self.in_document {
            return Role::Other;
        }
        let (path, key) = match self.stack.last_mut() {
            None => (String::new(), None),
            Some(Frame::Skip { .. }) => return Role::Other,
            Some(Frame::Sequence { path, next_index }) => {
                let item = index_path(path, *next_index);
                *next_index += 1;
                (item, None)
            }
            Some(Frame::Mapping { path, pending_key }) => match pending_key.take() {
                None => {
                    *pending_key = Some((scalar.map(str::to_string), start));
                    return if scalar.is_some() {
                        Role::Other
                    } else {
                        Role::ComplexKey
                    };
                }
                Some((name, key_start)) => {
                    let name = name.unwrap_or_else(|| "?".to_string());
                    (child_path(path, &name), Some(key_start))
                }
            },
        };
        self.nodes
            .entry(path.clone())
            .or_insert(NodeSpan { key, start, end });
        Role::Value(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
# café config
mcp:
  servers:
    - name: files   # the first
      args: [a, \"b c\"]
      annotation_trust: ignore
    - name: über
      env: {K: v}
policy: {approval: never}
";

    fn slice<'a>(text: &'a str, node: &NodeSpan) -> &'a str {
        &text[node.start.offset..node.end.offset]
    }

    #[test]
    fn indexes_keys_and_values() {
        let spans = Spans::parse(TEXT).expect("parses");
        assert_eq!(spans.lookup("mcp.servers[0].name"), Some((4, 13)));
        assert_eq!(
            spans.key("mcp.servers[0].name"),
            Some(Position {
                line: 4,
                column: 7,
                // "# café config\n" is 15 bytes (é is two), "mcp:\n" 5, "  servers:\n" 11.
                offset: 15 + 5 + 11 + 6,
            })
        );
        assert_eq!(spans.lookup("mcp.servers[0]"), Some((4, 7)));
        assert_eq!(spans.key("mcp.servers[0]"), None);
        assert_eq!(spans.lookup("mcp.servers[1].name"), Some((7, 13)));
        assert_eq!(spans.lookup("mcp.servers[1].env.K"), Some((8, 16)));
        assert_eq!(spans.lookup("policy.approval"), Some((9, 20)));
        assert_eq!(spans.lookup("mcp.servers[2]"), None);
        assert_eq!(spans.lookup("nope"), None);
        assert!(spans.get("").is_some());
    }

    #[test]
    fn byte_offsets_cover_the_value() {
        let spans = Spans::parse(TEXT).expect("parses");
        let node = |path: &str| *spans.get(path).unwrap_or_else(|| panic!("{path}"));
        assert_eq!(slice(TEXT, &node("mcp.servers[0].name")), "files");
        assert_eq!(slice(TEXT, &node("mcp.servers[0].args[1]")), "\"b c\"");
        assert_eq!(
            slice(TEXT, &node("mcp.servers[0].annotation_trust")),
            "ignore"
        );
        // After a multi-byte character on the same line, offsets are still byte offsets.
        assert_eq!(slice(TEXT, &node("mcp.servers[1].name")), "über");
        assert_eq!(slice(TEXT, &node("mcp.servers[1].env")), "{K: v}");
        let trust = node("mcp.servers[0].annotation_trust");
        let key = trust.key.expect("key");
        assert_eq!(&TEXT[key.offset..trust.start.offset], "annotation_trust: ");
    }

    #[test]
    fn collections_end_after_they_start() {
        let spans = Spans::parse(TEXT).expect("parses");
        for (path, node) in spans.iter() {
            assert!(node.end >= node.start, "{path}: {node:?}");
        }
    }

    #[test]
    fn a_flow_collection_ends_at_its_bracket_whatever_follows() {
        let text = "a: [x, y]   # list\nb: {k: v} # map\n";
        let spans = Spans::parse(text).expect("parses");
        assert_eq!(slice(text, spans.get("a").unwrap()), "[x, y]");
        assert_eq!(slice(text, spans.get("b").unwrap()), "{k: v}");
    }

    #[test]
    fn first_duplicate_key_wins() {
        let spans = Spans::parse("a: 1\na: 2\n").expect("parses");
        assert_eq!(spans.lookup("a"), Some((1, 4)));
    }

    #[test]
    fn complex_keys_and_aliases_do_not_derail_the_walk() {
        let text = "? [x, y]\n: 1\nbase: &b {k: v}\ncopy: *b\nafter: {z: 2}\n";
        let spans = Spans::parse(text).expect("parses");
        assert_eq!(spans.lookup("copy"), Some((4, 7)));
        assert_eq!(spans.lookup("after.z"), Some((5, 12)));
        assert_eq!(spans.lookup("x"), None);
    }

    #[test]
    fn only_the_first_document_is_indexed() {
        let spans = Spans::parse("a: 1\n---\nb: 2\n").expect("parses");
        assert!(spans.lookup("a").is_some());
        assert_eq!(spans.lookup("b"), None);
    }

    #[test]
    fn empty_text_has_no_root() {
        let spans = Spans::parse("").expect("parses");
        assert_eq!(spans.get(""), None);
        assert_eq!(spans.iter().count(), 0);
    }

    #[test]
    fn syntax_errors_are_located() {
        let err = Spans::parse("a:\n  b: 1\n c: [\n").expect_err("bad yaml");
        assert_eq!(err.position.line, 3);
        assert!(err.position.column >= 1);
        assert!(!err.message.is_empty());
        let err = Spans::parse("k: \"unterminated\n").expect_err("bad yaml");
        assert_eq!((err.position.line, err.position.column), (1, 4), "{err:?}");
    }

    #[test]
    fn path_helpers() {
        assert_eq!(child_path("", "mcp"), "mcp");
        assert_eq!(child_path("mcp", "servers"), "mcp.servers");
        assert_eq!(index_path("mcp.servers", 3), "mcp.servers[3]");
    }
}
