//! Fuzz target: a skill's `SKILL.md` (`mcp::skills`) — its YAML front matter read, and the
//! whole file checked against a listing — on any bytes.
//!
//! Held: no panic; a front matter read is a mapping; a file whose bytes are not the listed
//! ones is never verified.
#![no_main]

use aimon_console::mcp::skills::{front_matter, verify};
use libfuzzer_sys::fuzz_target;
use rmcp::model::{Skill, SkillFrontmatter, SkillResource, SkillResources};

const URI: &str = "skill://fuzz/SKILL.md";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(found) = front_matter(&text) {
        // A mapping, whatever the YAML held.
        let _ = found.len();
    }
    // Listed as exactly these bytes: verified only if its front matter is the listed one.
    let listed = Skill::new(
        URI,
        SkillFrontmatter::new("fuzz", "a fuzzed skill"),
        SkillResources::Files(vec![SkillResource::from_bytes(URI, data)]),
    );
    let _ = verify(&listed, data);
    // Listed as other bytes: never verified.
    let mut other = data.to_vec();
    other.push(b'\n');
    let elsewhere = Skill::new(
        URI,
        SkillFrontmatter::new("fuzz", "a fuzzed skill"),
        SkillResources::Files(vec![SkillResource::from_bytes(URI, &other)]),
    );
    assert!(verify(&elsewhere, data).is_err());
});
