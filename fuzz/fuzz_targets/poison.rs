//! Fuzz target: the tool-poisoning detector (`tool::poison`) on any text, as a description, a
//! schema's text or a server's instructions.
//!
//! Held: no panic; every span is within the text (in characters) and not empty; at most
//! `MAX_FLAGS` a field; the words of the flags are made whatever they are.
#![no_main]

use aimon_console::tool::poison::{scan, scan_tool, words};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let chars = text.chars().count();
    let flags = scan("description", &text, "own");
    assert!(flags.len() <= 32, "{} flags", flags.len());
    for f in &flags {
        assert!(f.start < f.end && f.end <= chars, "{f:?} in {chars} characters");
    }
    let _ = words(&flags);
    let _ = scan_tool("own", &text, &text);
});
