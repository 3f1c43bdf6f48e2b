//! Skills (the skills extension, SEP-2640) headless, against the demo server over real pipes:
//! listed from the listing alone, loaded only when its `SKILL.md` is the one listed, and a
//! tampered one refused.

mod common;

use std::time::Duration;

use common::*;
use serde_json::Value;

const SKILL: &str = "skill://note-taking/SKILL.md";

#[test]
fn skills_are_listed_and_loaded_only_as_listed() {
    let m = marker("skills");
    let mut yaml = String::from("mcp:\n  servers:\n");
    yaml.push_str(&demo_server("notes", &["--skills"], "", &m));
    yaml.push_str(&demo_server("bad", &["--tampered-skill"], "", &m));
    yaml.push_str(&demo_server("plain", &[], "", &m));
    let cfg = write_config(&yaml);
    let path = Some(cfg.path.as_path());

    // Listed: both skill servers, their files with sizes; the server without the extension
    // is not asked.
    let out = run(&["skills", "--json"], path);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let listed = stdout_json(&out);
    let skills = listed["skills"].as_array().expect("skills");
    let servers: Vec<&str> = skills.iter().filter_map(|s| s["server"].as_str()).collect();
    assert_eq!(servers, ["notes", "bad"], "{listed:#}");
    assert_eq!(skills[0]["name"], "note-taking");
    assert_eq!(skills[0]["uri"], SKILL);
    assert_eq!(skills[0]["files"].as_array().map(Vec::len), Some(2));
    assert_eq!(listed["errors"], Value::Array(vec![]));

    // Loaded: the SKILL.md as listed, and what was checked.
    let out = run(
        &["skills", "--load", SKILL, "--server", "notes", "--json"],
        path,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let loaded = stdout_json(&out);
    assert!(
        loaded["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("---\nname: note-taking\n")),
        "{loaded:#}"
    );
    assert_eq!(
        loaded["verified"],
        "size and sha256 digest as listed, front matter as listed"
    );

    // Tampered: refused, nothing of it printed.
    let out = run(&["skills", "--load", SKILL, "--server", "bad"], path);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("refused") && stderr.contains("digest"),
        "{stderr}"
    );

    // Two servers list it: which one is asked.
    let out = run(&["skills", "--load", SKILL], path);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("name one with --server"));
    assert!(wait_gone(&m, Duration::from_secs(3)).is_empty());
}
