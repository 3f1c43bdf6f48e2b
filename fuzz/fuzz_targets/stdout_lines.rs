//! Fuzz target: what inspects a server's stdout. `classify_line` on every line, the direct read
//! of a `tools/call` answer (`classify_answer`) held against it, and the bounded line reader
//! held against a plain split of the same bytes (with a small buffer and limit, so lines
//! straddle buffer refills and cross the limit).
#![no_main]

use aimon_console::mcp::transport::lines::{
    classify_answer, classify_line, read_line_bounded, Line, LineKind, PendingCalls,
};
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
    let mut buf = Vec::new();
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
                assert_eq!(buf.as_slice(), want);
                agree(&buf, &calls);
            }
            Ok(Line::TooLong(n)) => {
                assert_eq!(n, expected[seen].len());
                assert!(n > max);
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
fn calls_in_flight() -> PendingCalls {
    let calls = PendingCalls::default();
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
fn agree(line: &[u8], calls: &PendingCalls) {
    let as_message = |kind| match kind {
        LineKind::Message(m) => Some(serde_json::to_value(*m).expect("a message serializes")),
        _ => None,
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
}
