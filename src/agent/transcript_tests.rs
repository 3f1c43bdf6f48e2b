//! Tests of `transcript.rs`: sessions written, listed, read back (past a cut line) and resumed.

use super::*;
use crate::agent::turn::Item;

#[test]
fn dates_and_ids() {
    assert_eq!(civil_from_days(0), (1970, 1, 1));
    assert_eq!(civil_from_days(20_000), (2024, 10, 4));
    assert_eq!(fmt_time(1_700_000_000_000), "2023-11-14 22:13");
    let id = new_id();
    assert!(valid_id(&id) && id.len() == 20, "{id}");
    assert!(!valid_id("../etc") && !valid_id(""));
}

/// A transcript, and the sessions folder made for it, are the owner's only.
#[test]
fn a_transcript_is_its_owners_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("state").join("sessions");
    let t = Transcript::create(&sessions, Path::new("/c.yaml"), "demo", "demo").unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&t.path), 0o600);
    assert_eq!(mode(&sessions), 0o700);
}

#[test]
fn a_transcript_is_written_listed_and_read_back_as_messages() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = Transcript::create(dir.path(), Path::new("/c.yaml"), "demo", "demo").unwrap();
    let call = ToolCall {
        id: "c1".into(),
        name: "mcp__n__write_note".into(),
        arguments: "{}".into(),
    };
    for record in [
        Record::Prompt {
            at_ms: 1,
            text: "save it".into(),
        },
        Record::Assistant {
            turn: 1,
            text: "Saving.".into(),
            reasoning: Vec::new(),
            tool_calls: vec![
                call.clone(),
                // Cut short: the transcript keeps it, the model is sent `{}`.
                ToolCall {
                    id: "c2".into(),
                    arguments: "{\"title\": \"a".into(),
                    ..call.clone()
                },
            ],
            finish_reason: Some(FinishReason::ToolCalls),
            usage: None,
            latency_ms: 3,
        },
        Record::ToolResult {
            turn: 1,
            call_id: "c1".into(),
            tool: call.name.clone(),
            runtime_id: Some(1),
            status: "ok".into(),
            content: "saved".into(),
            sent: None,
        },
    ] {
        t.append(record);
    }
    // Lines wait in the buffer until flushed.
    assert_eq!(
        std::fs::read_to_string(t.path()).unwrap().lines().count(),
        1
    );
    t.flush().unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(t.path())
        .unwrap()
        .write_all(b"{\"type\": \"prompt\", \"cut sh")
        .unwrap();
    let listed = list(dir.path());
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].prompts, listed[0].first_prompt.as_str()),
        (1, "save it")
    );
    let (_, records) = Transcript::resume(dir.path(), t.id(), "demo", "demo").unwrap();
    let messages = items(&records);
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert!(
        matches!(&messages[1], Item::Assistant { calls: tool_calls, .. } if tool_calls[0].arguments == "{}" && tool_calls[1].arguments == "{}"),
        "{messages:?}"
    );
    assert!(
        matches!(&records[2], Record::Assistant { tool_calls, .. } if tool_calls[1].arguments == "{\"title\": \"a"),
        "{records:?}"
    );
    assert!(
        matches!(&messages[3], Item::ToolResult { call_id: tool_call_id, text: content } if tool_call_id == "c2" && content.contains("no result"))
    );
    assert!(matches!(
        Transcript::resume(dir.path(), "nope", "d", "d"),
        Err(TranscriptError::NotFound { .. })
    ));
}

#[test]
fn a_line_cut_inside_a_character_is_skipped_and_the_session_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = Transcript::create(dir.path(), Path::new("/c.yaml"), "demo", "demo").unwrap();
    t.append(prompt("café"));
    t.flush().unwrap();
    // A crash in the middle of the two bytes of `é`.
    let line = serde_json::to_vec(&prompt("thé")).unwrap();
    let cut = line.iter().position(|b| *b == 0xc3).unwrap() + 1;
    let mut file = OpenOptions::new().append(true).open(t.path()).unwrap();
    file.write_all(&line[..cut]).unwrap();
    let listed = list(dir.path());
    assert_eq!(listed.len(), 1, "the session is listed");
    assert_eq!(listed[0].first_prompt, "café");
    let (mut t, records) = Transcript::resume(dir.path(), t.id(), "demo", "demo").unwrap();
    // Read whole, the cut line skipped; the prompt the crash left unanswered is not sent again.
    assert_eq!(
        records
            .iter()
            .filter(|r| matches!(r, Record::Prompt { .. }))
            .count(),
        1
    );
    assert!(items(&records).is_empty());
    t.append(prompt("after"));
    t.flush().unwrap();
    let prompts = prompts_in(t.path());
    assert_eq!(prompts, vec![prompt("café"), prompt("after")]);
}

#[test]
fn a_prompt_that_stopped_unanswered_is_left_out_of_the_messages() {
    let records = [
        prompt("first"),
        Record::Stopped {
            reason: "model_failed".into(),
            message: "connect_refused".into(),
        },
        prompt("again"),
        Record::Assistant {
            turn: 1,
            text: "Hello.".into(),
            reasoning: Vec::new(),
            tool_calls: Vec::new(),
            finish_reason: Some(FinishReason::Stop),
            usage: None,
            latency_ms: 1,
        },
        Record::Answer {
            text: "Hello.".into(),
        },
        // Stopped after an answer (max_turns, a cancel in a later turn): the prompt stays.
        prompt("more"),
        Record::Assistant {
            turn: 1,
            text: String::new(),
            reasoning: Vec::new(),
            tool_calls: Vec::new(),
            finish_reason: None,
            usage: None,
            latency_ms: 1,
        },
        Record::Stopped {
            reason: "cancelled".into(),
            message: "cancelled by the operator".into(),
        },
    ];
    let mut records = records.to_vec();
    // A session killed mid-prompt (no stopped line), resumed, and killed again mid-prompt.
    records.push(prompt("killed"));
    records.push(Record::Resumed {
        at_ms: 2,
        profile: "demo".into(),
        model: "demo".into(),
    });
    records.push(prompt("killed again"));
    let messages = items(&records);
    let users: Vec<&str> = messages
        .iter()
        .filter_map(|m| match m {
            Item::User { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(users, ["again", "more"], "{messages:?}");
    assert_eq!(messages.len(), 4, "{messages:?}");
}

/// A compaction in a transcript replaces what came before the items it kept by the summary,
/// as the live conversation did; a result cut for the model is read back as it was sent.
#[test]
fn a_compaction_and_a_cut_result_read_back_as_the_model_had_them() {
    let answer = |text: &str, calls: Vec<ToolCall>| Record::Assistant {
        turn: 1,
        text: text.into(),
        reasoning: Vec::new(),
        tool_calls: calls,
        finish_reason: None,
        usage: None,
        latency_ms: 1,
    };
    let call = ToolCall {
        id: "c1".into(),
        name: "t".into(),
        arguments: "{}".into(),
    };
    let records = vec![
        prompt("first"),
        answer("one", Vec::new()),
        prompt("second"),
        Record::Compacted {
            at_ms: 2,
            summary: "they said first".into(),
            kept: 1,
        },
        answer("calling", vec![call.clone()]),
        Record::ToolResult {
            turn: 1,
            call_id: "c1".into(),
            tool: "t".into(),
            runtime_id: None,
            status: "ok".into(),
            content: "x".repeat(100),
            sent: Some("x…x".into()),
        },
    ];
    let items = items(&records);
    assert_eq!(items.len(), 5, "{items:#?}");
    assert!(matches!(&items[0], Item::User { text } if text.ends_with("they said first")));
    assert!(matches!(&items[2], Item::User { text } if text == "second"));
    assert!(matches!(&items[4], Item::ToolResult { text, .. } if text == "x…x"));
    // A prompt left unanswered after the compaction is still left out.
    let mut cut_short = records[..4].to_vec();
    cut_short.push(Record::Stopped {
        reason: "cancelled".into(),
        message: String::new(),
    });
    assert_eq!(super::items(&cut_short).len(), 2);
}

/// A flush the disk refuses keeps its lines: the next flush that can write them does, whole
/// and once, with what was appended meanwhile.
#[test]
fn lines_a_failed_flush_could_not_write_are_kept_for_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = Transcript::create(dir.path(), Path::new("/c.yaml"), "demo", "demo").unwrap();
    let good = std::mem::replace(
        &mut t.file,
        OpenOptions::new().write(true).open("/dev/full").unwrap(),
    );
    t.append(prompt("first"));
    let refused = t.flush().unwrap_err().to_string();
    assert!(refused.contains("No space left on device"), "{refused}");
    t.append(prompt("second"));
    t.file = good;
    t.flush().unwrap();
    let prompts = prompts_in(t.path());
    assert_eq!(prompts, vec![prompt("first"), prompt("second")]);
    // Nothing is left to write: dropping it adds no line.
    let path = t.path().to_path_buf();
    let bytes = std::fs::read(&path).unwrap();
    drop(t);
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

/// Sessions begun in the same second each get a transcript of their own: an id drawn twice
/// (16 random bits a second) is drawn again, not refused (2,000 in a second or two draw about
/// thirty ids twice).
#[test]
fn sessions_begun_at_once_each_get_their_own_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let ids: std::collections::HashSet<String> = (0..2_000)
        .map(|_| {
            Transcript::create(dir.path(), Path::new("/c.yaml"), "demo", "demo")
                .unwrap()
                .id()
                .to_string()
        })
        .collect();
    assert_eq!(ids.len(), 2_000);
}

#[test]
fn records_of_some_kinds_are_read_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = Transcript::create(dir.path(), Path::new("/c.yaml"), "demo", "demo").unwrap();
    t.append(prompt("first"));
    t.flush().unwrap();
    drop(t);
    let id = list(dir.path())[0].id.clone();
    let (mut t, _) = Transcript::resume(dir.path(), &id, "other", "other-model").unwrap();
    t.append(prompt("second"));
    t.flush().unwrap();
    let kinds = |kinds: &[&str]| -> Vec<String> {
        read_kinds(t.path(), kinds)
            .unwrap()
            .iter()
            .map(|r| {
                serde_json::to_value(r).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(kinds(&["session", "resumed"]), ["session", "resumed"]);
    assert_eq!(kinds(&["prompt"]), ["prompt", "prompt"]);
    // A kind is matched whole, not as the start of another.
    assert!(kinds(&["prom", "sess"]).is_empty());
    assert_eq!(read(t.path()).unwrap().len(), 4);
}

fn prompt(text: &str) -> Record {
    Record::Prompt {
        at_ms: 1,
        text: text.into(),
    }
}

/// The prompt records of the transcript at `path`.
fn prompts_in(path: &Path) -> Vec<Record> {
    read(path)
        .unwrap()
        .into_iter()
        .filter(|r| matches!(r, Record::Prompt { .. }))
        .collect()
}
