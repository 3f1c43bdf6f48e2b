//! Fuzz target: a kept tool list file (`mcp::tool_cache`, the lists of `start: lazy`
//! servers) read on any bytes.
//!
//! Held: no panic; a list is taken only for the config entry it names, and never once its
//! time is up.
#![no_main]

use aimon_console::mcp::tool_cache::{parse, NoList};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let now = 1_000_000;
    if let Ok(tools) = parse(data, "entry", now) {
        assert!(tools.iter().all(|t| !t.input_schema.as_str().is_empty()));
        assert_eq!(parse(data, "another entry", now), Err(NoList::OtherEntry));
        assert_eq!(parse(data, "entry", u64::MAX), Err(NoList::Expired));
    }
});
