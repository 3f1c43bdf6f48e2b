//! Transcripts: every conversation appended as JSON lines under
//! `$XDG_STATE_HOME/aimon-console/sessions/ID.jsonl` (prompts, answers, tool calls with their
//! arguments, approvals and how they were given, hook runs, results, usage), listed by `sessions` and read
//! back by `--resume ID`. Secrets are never written: no key, no header, no environment.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::providers::openai_chat;
use super::turn::{FinishReason, Reasoning, ToolCall, Usage};
use crate::runtime::{HookOutcome, HookRun};

/// Why a transcript could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    #[error("cannot write the transcript {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no session {id} in {dir} (see `aimon-console sessions`)")]
    NotFound { id: String, dir: PathBuf },
    #[error("cannot read the session {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0:?} is not a session id (letters, digits, - and _)")]
    BadId(String),
}

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// The first line: which config and profile the conversation began with.
    Session {
        id: String,
        at_ms: u64,
        config: String,
        profile: String,
        model: String,
    },
    /// The conversation was resumed (possibly with another profile).
    Resumed {
        at_ms: u64,
        profile: String,
        model: String,
    },
    Prompt {
        at_ms: u64,
        text: String,
    },
    /// One model turn's answer. Written before providers, its calls and usage had Chat
    /// Completions' shapes: they are read still.
    Assistant {
        turn: u32,
        text: String,
        /// Its reasoning, sent back with it when the conversation goes on.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reasoning: Vec<Reasoning>,
        #[serde(default, deserialize_with = "calls_any_form")]
        tool_calls: Vec<ToolCall>,
        finish_reason: Option<FinishReason>,
        #[serde(default, deserialize_with = "usage_any_form")]
        usage: Option<Usage>,
        latency_ms: u64,
    },
    /// A tool call the model asked for, and its stated reason.
    ToolCall {
        turn: u32,
        call_id: String,
        tool: String,
        arguments: String,
        reason: String,
    },
    /// How a call's approval was given: `decision` (`allow_once`, `allow_for_session`,
    /// `allow_always`, `deny`) and `by` (`operator`, `yes_flag`, `no_terminal`, `unanswered`).
    Approval {
        call_id: String,
        runtime_id: Option<u64>,
        decision: String,
        by: String,
    },
    /// Why a call ran without asking, when a rule, a hook or the session's approval let it
    /// (`why`: "allowed by policy.rules[1]"…).
    Allowed {
        call_id: String,
        runtime_id: Option<u64>,
        why: String,
    },
    /// What a call gave, whole (`content`), and when it was over `max_result_tokens`, what the
    /// model was sent of it (`sent`: its head and tail).
    ToolResult {
        turn: u32,
        call_id: String,
        tool: String,
        runtime_id: Option<u64>,
        status: String,
        content: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sent: Option<String>,
    },
    /// The conversation was compacted: every item but the last `kept` stands replaced by the
    /// model's `summary` from here on (the records before stay as they were).
    Compacted {
        at_ms: u64,
        summary: String,
        kept: usize,
    },
    /// A hook ran: `pre_tool_use`/`post_tool_use` for a call (`call_id`, `runtime_id`),
    /// `user_prompt` for the prompt, `turn_end` for `turn`. Its decision and reason, or the
    /// warning that made it count as silent (the runtime's `hook` event, kept).
    Hook {
        event: String,
        hook: usize,
        action: String,
        #[serde(default)]
        turn: Option<u32>,
        #[serde(default)]
        call_id: Option<String>,
        #[serde(default)]
        runtime_id: Option<u64>,
        elapsed_ms: u64,
        decision: Option<String>,
        reason: Option<String>,
        warning: Option<String>,
    },
    Answer {
        text: String,
    },
    /// The prompt ended without an answer: `max_turns`, `model_failed` or `cancelled`.
    Stopped {
        reason: String,
        message: String,
    },
}

impl Record {
    /// The record of a hook's run, for the call `call_id` of the model, or turn `turn`.
    pub fn hook(run: &HookRun, turn: Option<u32>, call_id: Option<&str>) -> Record {
        let (decision, reason, warning) = match &run.outcome {
            HookOutcome::Decided { decision, reason } => {
                (Some(decision.as_str().to_string()), reason.clone(), None)
            }
            HookOutcome::Ran => (None, None, None),
            HookOutcome::Warning(why) => (None, None, Some(why.clone())),
        };
        Record::Hook {
            event: run.event.as_str().to_string(),
            hook: run.hook,
            action: run.action.clone(),
            turn,
            call_id: call_id.map(str::to_string),
            runtime_id: run.call,
            elapsed_ms: crate::text::millis(run.elapsed),
            decision,
            reason,
            warning,
        }
    }
}

/// An open transcript, appended to record by record. Records wait in memory until
/// [`Transcript::flush`], which serializes them and writes them in one `write`. The loop
/// flushes as each model request and each turn's calls begin to wait (what they send has gone
/// out, their answer cannot have come yet) and when a prompt ends: a turn costs two writes, not
/// one a line, made while the turn waits rather than added to it, and what led to a long wait
/// is on disk while it lasts.
#[derive(Debug)]
pub struct Transcript {
    id: String,
    path: PathBuf,
    file: File,
    /// Records appended since the last flush.
    queued: Vec<Record>,
    /// Lines serialized but not yet written (a flush the disk refused leaves them here).
    unwritten: Vec<u8>,
}

/// The most of its write buffer a transcript keeps between flushes (bytes).
const KEPT_BUFFER: usize = 64 * 1024;

/// Where transcripts go: `$XDG_STATE_HOME/aimon-console/sessions` (`~/.local/state/…`).
pub fn sessions_dir() -> PathBuf {
    crate::config::state_home().join("sessions")
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// A new session id: the UTC time it began and a few random hex digits
/// (`20261130-205100-3f2a`), so ids sort by time.
pub fn new_id() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs();
    let (y, m, d) = civil_from_days(i64::try_from(secs / 86_400).unwrap_or(0));
    let rest = secs % 86_400;
    let salt = (now.subsec_nanos() ^ std::process::id().rotate_left(16)) & 0xffff;
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}-{salt:04x}",
        rest / 3600,
        (rest % 3600) / 60,
        rest % 60
    )
}

/// A UTC date for `ms` since the epoch: `2026-11-30 20:51`.
pub fn fmt_time(ms: u64) -> String {
    let secs = ms / 1000;
    let (y, m, d) = civil_from_days(i64::try_from(secs / 86_400).unwrap_or(0));
    let rest = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rest / 3600,
        (rest % 3600) / 60
    )
}

/// Year, month, day of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let m = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The file of session `id` in `dir`, if there is one.
pub fn locate(dir: &Path, id: &str) -> Result<PathBuf, TranscriptError> {
    if !valid_id(id) {
        return Err(TranscriptError::BadId(id.to_string()));
    }
    let path = dir.join(format!("{id}.jsonl"));
    if !path.is_file() {
        return Err(TranscriptError::NotFound {
            id: id.to_string(),
            dir: dir.to_path_buf(),
        });
    }
    Ok(path)
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl Transcript {
    /// Starts a new transcript in `dir` and writes its `session` line.
    pub fn create(
        dir: &Path,
        config: &Path,
        profile: &str,
        model: &str,
    ) -> Result<Transcript, TranscriptError> {
        // Owner only: a transcript holds what the model and the tools said.
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| TranscriptError::Write {
                path: dir.to_path_buf(),
                source,
            })?;
        // Two sessions begun in the same second may draw the same id (16 bits of it are
        // random): the second takes another.
        let mut attempts = 0;
        let (id, path, file) = loop {
            let id = new_id();
            let path = dir.join(format!("{id}.jsonl"));
            let opened = OpenOptions::new()
                .create_new(true)
                .append(true)
                .mode(0o600)
                .open(&path);
            match opened {
                Ok(file) => break (id, path, file),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempts < 16 => {
                    attempts += 1;
                }
                Err(source) => return Err(TranscriptError::Write { path, source }),
            }
        };
        let mut transcript = Transcript {
            id,
            path,
            file,
            queued: Vec::new(),
            unwritten: Vec::new(),
        };
        transcript.append(Record::Session {
            id: transcript.id.clone(),
            at_ms: now_ms(),
            config: config.display().to_string(),
            profile: profile.to_string(),
            model: model.to_string(),
        });
        transcript.flush()?;
        Ok(transcript)
    }

    /// Opens session `id` in `dir` to continue it: its records so far, and the transcript to
    /// append to (a `resumed` line is written).
    pub fn resume(
        dir: &Path,
        id: &str,
        profile: &str,
        model: &str,
    ) -> Result<(Transcript, Vec<Record>), TranscriptError> {
        let path = locate(dir, id)?;
        let records = read(&path)?;
        let cut_short = reading::cut_short(&path);
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|source| TranscriptError::Write {
                path: path.clone(),
                source,
            })?;
        let mut transcript = Transcript {
            id: id.to_string(),
            path,
            file,
            queued: Vec::new(),
            unwritten: Vec::new(),
        };
        if cut_short {
            // A line cut short (a crash mid-write) must not swallow the next one.
            transcript.unwritten.push(b'\n');
        }
        transcript.append(Record::Resumed {
            at_ms: now_ms(),
            profile: profile.to_string(),
            model: model.to_string(),
        });
        transcript.flush()?;
        Ok((transcript, records))
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record (kept until [`flush`](Self::flush) writes it).
    pub fn append(&mut self, record: Record) {
        self.queued.push(record);
    }

    /// Writes the records appended since the last flush, one line each, in one `write` (also
    /// done when the transcript is dropped). Lines the disk refused stay for the next flush.
    pub fn flush(&mut self) -> Result<(), TranscriptError> {
        for record in self.queued.drain(..) {
            let start = self.unwritten.len();
            // A record has no map with keys other than strings, the one thing serde_json
            // refuses: this cannot fail, and if it did, no half line would stay behind.
            if serde_json::to_writer(&mut self.unwritten, &record).is_ok() {
                self.unwritten.push(b'\n');
            } else {
                self.unwritten.truncate(start);
            }
        }
        let mut written = 0;
        while written < self.unwritten.len() {
            match self.file.write(&self.unwritten[written..]) {
                Ok(0) => return self.failed(written, std::io::ErrorKind::WriteZero.into()),
                Ok(n) => written += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return self.failed(written, e),
            }
        }
        self.unwritten.clear();
        // One long result's lines do not stay allocated for the rest of the conversation.
        self.unwritten.shrink_to(KEPT_BUFFER);
        Ok(())
    }

    /// A flush that stopped after `written` bytes: those leave the buffer, the rest stay.
    fn failed(&mut self, written: usize, source: std::io::Error) -> Result<(), TranscriptError> {
        self.unwritten.drain(..written);
        Err(TranscriptError::Write {
            path: self.path.clone(),
            source,
        })
    }

    /// Flushes, saying in the log what could not be written.
    pub fn write_out(&mut self) {
        if let Err(e) = self.flush() {
            tracing::warn!(error = %e, "transcript lines not written");
        }
    }
}

impl Drop for Transcript {
    fn drop(&mut self) {
        self.write_out();
    }
}

/// A call of the current form, or of the form written before providers.
fn calls_any_form<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<ToolCall>, D::Error> {
    let values = Vec::<serde_json::Value>::deserialize(d)?;
    Ok(values
        .into_iter()
        .filter_map(|v| {
            ToolCall::deserialize(&v)
                .ok()
                .or_else(|| openai_chat::legacy_call(v))
        })
        .collect())
}

/// Usage of the current form, or of the form written before providers.
fn usage_any_form<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Usage>, D::Error> {
    let Some(value) = Option::<serde_json::Value>::deserialize(d)? else {
        return Ok(None);
    };
    let current = value
        .as_object()
        .is_some_and(|o| o.contains_key("input_tokens"));
    Ok(if current {
        Usage::deserialize(&value).ok()
    } else {
        openai_chat::legacy_usage(value)
    })
}

#[path = "transcript_read.rs"]
mod reading;
pub use reading::{items, list, read, read_kinds, SessionSummary};

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
