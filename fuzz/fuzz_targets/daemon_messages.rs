//! Fuzz target: the daemon's message reader (`aimon_console::daemon::wire`): any bytes, cut
//! into chunks of any size, framed into lines and read as JSON-RPC.
//!
//! Held: no panic; no line over the limit is ever handed on; the same bytes framed in one
//! chunk give the same lines; every message read has an object for its params and a string
//! or number id (or none); every refusal's answer is one line of JSON-RPC.
#![no_main]

use aimon_console::daemon::wire::{parse, Frame, Framer, MAX_LINE};
use libfuzzer_sys::fuzz_target;

fn frames(data: &[u8], chunk: usize) -> Vec<Frame> {
    let mut framer = Framer::default();
    let mut out = Vec::new();
    for piece in data.chunks(chunk.max(1)) {
        framer.feed(piece, &mut |f| out.push(f));
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let chunked = frames(rest, usize::from(first));
    assert_eq!(chunked, frames(rest, rest.len()));
    for frame in chunked {
        let Frame::Line(line) = frame else { continue };
        assert!(line.len() <= MAX_LINE && !line.contains(&b'\n'));
        match parse(&line) {
            Ok(message) => {
                assert!(message.params.is_object());
                assert!(message.id.as_ref().is_none_or(|id| id.is_string() || id.is_number()));
                assert!(!message.method.is_empty());
            }
            Err(refusal) => {
                let answer = refusal.response();
                assert!(!answer.contains('\n'));
                let value: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
                assert_eq!(value["jsonrpc"], "2.0");
                assert!(value["error"]["code"].is_i64());
            }
        }
    }
});
