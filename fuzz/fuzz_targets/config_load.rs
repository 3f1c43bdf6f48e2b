//! Fuzz target: the config loader (`config::load_str`) on arbitrary text. It must return a
//! config or a located error, never panic, whatever the YAML, the `${VAR}`s or the values.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let env = |name: &str| match name {
        "HOME" => Some("/home/fuzz".to_string()),
        "EMPTY" => Some(String::new()),
        _ => None,
    };
    let _ = aimon_console::config::load_str(Path::new("/fuzz/aimon.yaml"), text, &env);
});
