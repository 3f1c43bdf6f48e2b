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
            let end = lines.position(&span.end);
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
