//! Fuzz target: what inspects a server's stdout. `classify_line` on every line, the direct read
//! of a `tools/call` answer (`classify_answer`) held against it, the bounded scan for the id of
//! a line that cannot be read, and the bounded line reader held against a plain split of the
//! same bytes (with a small buffer and limit, so lines straddle buffer refills and cross the
//! limit).
#![no_main]

use aimon_console::mcp::transport::lines::{
    classify_answer, classify_line, read_line_bounded, Line, LineBuf, LineKind, Pending,
};
use aimon_console::mcp::transport::unreadable::{defect_of, scan};
use libfuzzer_sys::fuzz_target;
use tokio::io::BufReader;

fuzz_target!(|data: &[u8]| {
    let Some((&knobs, stream)) = data.split_first() else {
        return;
    };
    let capacity = usize::from(knobs & 0x0f) + 1;
    let max = usize::from(knobs >> 4) * 4;

    let mut expected: Vec<&[u8]> = stream.split(|b| *b == b'\n').collect();
    if expected.last().is_some_and(|p| p.is_empty()) {
        expected.pop();
    }

    // Answered calls are forgotten as the lines go by, as on a real connection.
    let calls = calls_in_flight();
    let mut reader = BufReader::with_capacity(capacity, stream);
    let mut buf = LineBuf::default();
    let mut seen = 0;
    loop {
        let line = futures::executor::block_on(read_line_bounded(&mut reader, &mut buf, max));
        match line {
            Ok(Line::Complete) => {
                let want = expected[seen];
                assert!(
                    want.len() <= max,
                    "a line over the limit came through whole"
                );
                assert_eq!(buf.line.as_slice(), want);
                agree(&buf.line, &calls);
            }
            Ok(Line::TooLong(n)) => {
                let want = expected[seen];
                assert_eq!(n, want.len());
                assert!(n > max);
                // What is kept of a long line is its start and its end, never more.
                assert!(want.starts_with(&buf.line));
                assert!(want.ends_with(&buf.tail));
                let _ = scan(&buf.line, &buf.tail);
            }
            Ok(Line::Eof) => break,
            Err(e) => panic!("reading a byte slice cannot fail: {e}"),
        }
        seen += 1;
    }
    assert_eq!(seen, expected.len());
    // Whole input as one line, too: the classifiers never panic on any bytes.
    agree(stream, &calls_in_flight());
});

/// `tools/call` requests 0 to 15 in flight.
fn calls_in_flight() -> Pending {
    let calls = Pending::default();
    for id in 0..16 {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t"}}}}"#
        );
        if let Ok(request) = serde_json::from_str(&line) {
            calls.sent(&request);
        }
    }
    calls
}

/// The direct read of a call's answer is a message exactly when the general read's is, with
/// the same JSON where the general read found a tool's result.
fn agree(line: &[u8], calls: &Pending) {
    let as_message = |kind| match kind {
        LineKind::Message(m) | LineKind::ToolPage(m, _) => {
            Some(serde_json::to_value(*m).expect("a message serializes"))
        }
        LineKind::Blank | LineKind::NotJson | LineKind::NotAMessage(_) => None,
    };
    let general = as_message(classify_line(line));
    let direct = as_message(classify_answer(line, calls));
    assert_eq!(general.is_some(), direct.is_some());
    let id = |v: &Option<serde_json::Value>| v.as_ref().and_then(|v| v.get("id").cloned());
    assert_eq!(id(&general), id(&direct));
    let is_tool_result = general
        .as_ref()
        .and_then(|v| v.get("result"))
        .is_some_and(|r| r.get("content").is_some());
    if is_tool_result {
        assert_eq!(general, direct);
    }
    // A line that is not a message: its id is found by a bounded scan, never a panic; the id
    // found in a whole line is the one a full parse finds, where there is one (keys written
    // with escapes, which the scan takes as written, aside).
    if general.is_none() && !line.contains(&b'\\') {
        let envelope = scan(line, line);
        let _ = defect_of(line, &envelope);
        if let (Some(found), Ok(value)) = (&envelope.id, serde_json::from_slice::<serde_json::Value>(line)) {
            if let Some(id) = value.get("id").filter(|id| id.is_i64() || id.is_string()) {
                assert_eq!(&serde_json::to_value(found).expect("an id"), id, "{value}");
            }
        }
    }
}
