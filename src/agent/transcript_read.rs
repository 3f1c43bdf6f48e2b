//! Reading transcripts back: every record of one (past a line a crash cut short), the
//! conversation they hold as the model's items, and the sessions a folder holds.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Record, TranscriptError};
use crate::agent::turn::Item;

/// What `sessions` shows of one transcript.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSummary {
    pub id: String,
    pub started_ms: u64,
    pub profile: String,
    pub model: String,
    /// The config file it was started with (as written in its first record).
    pub config: String,
    pub prompts: usize,
    pub first_prompt: String,
    pub path: PathBuf,
}

/// Every record of the transcript at `path`; lines that do not parse (a line cut short by a
/// crash, possibly inside a character) are skipped, and bytes that are not UTF-8 are read as
/// U+FFFD, so one bad line never hides the rest.
pub fn read(path: &Path) -> Result<Vec<Record>, TranscriptError> {
    read_where(path, |_| true)
}

/// As [`read`], of the records of `kinds` only (their `type`: `session`, `prompt`, …): the
/// other lines are not parsed (a long session's tool results are most of its bytes).
pub fn read_kinds(path: &Path, kinds: &[&str]) -> Result<Vec<Record>, TranscriptError> {
    read_where(path, |line| kinds.iter().any(|kind| of_kind(line, kind)))
}

/// Whether `line` is a record of `kind`: a record is written with its `type` first.
fn of_kind(line: &[u8], kind: &str) -> bool {
    line.strip_prefix(br#"{"type":""#)
        .and_then(|rest| rest.strip_prefix(kind.as_bytes()))
        .is_some_and(|rest| rest.starts_with(br#"","#))
}

/// As [`read`], of the lines `keep` takes only.
fn read_where(path: &Path, keep: impl Fn(&[u8]) -> bool) -> Result<Vec<Record>, TranscriptError> {
    let file = File::open(path).map_err(|source| TranscriptError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut records = Vec::new();
    for line in BufReader::new(file).split(b'\n') {
        let line = line.map_err(|source| TranscriptError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        if !keep(&line) {
            continue;
        }
        if let Ok(record) = serde_json::from_str(&String::from_utf8_lossy(&line)) {
            records.push(record);
        }
    }
    Ok(records)
}

/// Whether the file at `path` ends inside a line (a crash cut its last write short): its last
/// byte is read, not the file.
pub fn cut_short(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = File::open(path) else {
        return false;
    };
    let mut last = [0u8];
    file.seek(SeekFrom::End(-1)).is_ok() && file.read_exact(&mut last).is_ok() && last[0] != b'\n'
}

/// The conversation the records hold, as items for the model (without the system prompt).
/// A tool call whose result was never written gets one saying so, and a prompt that stopped
/// before any answer (or whose session ended before one, killed) is left out (as the live
/// conversation leaves it), so the conversation stays well formed.
pub fn items(records: &[Record]) -> Vec<Item> {
    let mut out: Vec<Item> = Vec::new();
    let mut open: Vec<String> = Vec::new();
    // Where the last prompt's item is, until an answer to it comes.
    let mut unanswered: Option<usize> = None;
    let close = |out: &mut Vec<Item>, open: &mut Vec<String>| {
        for id in open.drain(..) {
            out.push(Item::ToolResult {
                call_id: id,
                text: "error: no result (the session ended before the call finished)".into(),
            });
        }
    };
    for record in records {
        match record {
            Record::Prompt { text, .. } => {
                close(&mut out, &mut open);
                unanswered = Some(out.len());
                out.push(Item::User { text: text.clone() });
            }
            Record::Assistant {
                text,
                reasoning,
                tool_calls,
                ..
            } => {
                close(&mut out, &mut open);
                unanswered = None;
                open = tool_calls.iter().map(|c| c.id.clone()).collect();
                out.push(Item::assistant(
                    text.clone(),
                    reasoning.clone(),
                    tool_calls.clone(),
                ));
            }
            Record::ToolResult {
                call_id,
                content,
                sent,
                ..
            } => {
                if let Some(at) = open.iter().position(|id| id == call_id) {
                    open.remove(at);
                    out.push(Item::ToolResult {
                        call_id: call_id.clone(),
                        text: sent.as_ref().unwrap_or(content).clone(),
                    });
                }
            }
            Record::Compacted { summary, kept, .. } => {
                let start = out.len().saturating_sub(*kept);
                let mut rest = crate::agent::context::summary_items(summary);
                let replaced = rest.len();
                rest.extend(out.drain(start..));
                out = rest;
                unanswered = unanswered
                    .filter(|at| *at >= start)
                    .map(|at| at - start + replaced);
            }
            // Stopped before an answer, or its session killed and resumed: no answer came.
            Record::Resumed { .. } | Record::Stopped { .. } => {
                drop_unanswered(&mut out, &mut unanswered);
            }
            Record::Session { .. }
            | Record::ToolCall { .. }
            | Record::Approval { .. }
            | Record::Allowed { .. }
            | Record::Hook { .. }
            | Record::Answer { .. } => {}
        }
    }
    drop_unanswered(&mut out, &mut unanswered);
    close(&mut out, &mut open);
    out
}

/// Leaves out the prompt at `unanswered`, if it is still waiting for an answer.
fn drop_unanswered(out: &mut Vec<Item>, unanswered: &mut Option<usize>) {
    if let Some(at) = unanswered.take() {
        out.truncate(at);
    }
}

/// Every transcript in `dir`, oldest first.
pub fn list(dir: &Path) -> Vec<SessionSummary> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| {
            let records = read_kinds(&path, &["session", "prompt"]).ok()?;
            let id = path.file_stem()?.to_string_lossy().into_owned();
            let mut summary = SessionSummary {
                id,
                started_ms: 0,
                profile: String::new(),
                model: String::new(),
                config: String::new(),
                prompts: 0,
                first_prompt: String::new(),
                path: path.clone(),
            };
            for record in &records {
                match record {
                    Record::Session {
                        at_ms,
                        profile,
                        model,
                        config,
                        ..
                    } => {
                        summary.config = config.clone();
                        summary.started_ms = *at_ms;
                        summary.profile = profile.clone();
                        summary.model = model.clone();
                    }
                    Record::Prompt { text, .. } => {
                        if summary.prompts == 0 {
                            summary.first_prompt = text.clone();
                        }
                        summary.prompts += 1;
                    }
                    Record::Resumed { .. }
                    | Record::Compacted { .. }
                    | Record::Assistant { .. }
                    | Record::ToolCall { .. }
                    | Record::Approval { .. }
                    | Record::Allowed { .. }
                    | Record::Hook { .. }
                    | Record::ToolResult { .. }
                    | Record::Answer { .. }
                    | Record::Stopped { .. } => {}
                }
            }
            Some(summary)
        })
        .collect()
}
