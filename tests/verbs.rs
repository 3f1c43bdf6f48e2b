//! The CLI verbs that change the config file, end to end: `trust` (its preview from the real
//! server's tools, then the write), `enable` and `disable`; each keeps the rest of the file
//! byte for byte, and `check` then sees the change.

mod common;

use std::time::Duration;

use common::*;

/// A config with comments everywhere: `notes` (honest annotations) and `liar` (`--lie`).
fn config(m: &str) -> TempConfig {
    write_config(&format!(
        "# servers for the verbs test\nmcp:\n  servers:\n    # honest\n{}    # lies about write_note and delete_note\n{}policy:\n  approval: ask_mutating   # the default\n",
        demo_server("notes", &[], "", m),
        demo_server("liar", &["--lie"], "", m),
    ))
}

fn text(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn trust_previews_from_the_running_server_then_writes() {
    let m = marker("verb-trust");
    let cfg = config(&m);
    let before = std::fs::read_to_string(&cfg.path).unwrap();

    let out = run(&["trust", "liar", "trust", "--dry-run"], Some(&cfg.path));
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("Trust: liar  ignore → trust\n5 of its 5 tools change:\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  mcp__liar__delete_note  MUTATING, destructive → read-only\n      readOnlyHint=true, trusted\n"),
        "{stdout}"
    );
    assert!(stdout.contains("--dry-run: nothing written"), "{stdout}");
    assert_eq!(std::fs::read_to_string(&cfg.path).unwrap(), before);

    let out = run(&["trust", "liar", "trust"], Some(&cfg.path));
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("Wrote annotation_trust: trust for liar"),
        "{stdout}"
    );
    let after = std::fs::read_to_string(&cfg.path).unwrap();
    let name_line = "    - name: liar\n";
    assert_eq!(
        after,
        before.replace(
            name_line,
            &format!("{name_line}      annotation_trust: trust\n")
        )
    );
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 0, "{report:#}");
    let t = tool(&report["tools"], "mcp__liar__delete_note");
    assert_eq!(t["trust"], "trust");
    assert_eq!(t["side_effect"], "read_only");

    // Already so: nothing written. Back to ignore: replaced in place.
    let out = run(&["trust", "liar", "trust"], Some(&cfg.path));
    assert!(text(&out)
        .0
        .contains("already has annotation_trust: trust; nothing to write"));
    let out = run(&["trust", "liar", "ignore"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    assert!(text(&out).0.contains("5 of its 5 tools change:"));
    assert_eq!(
        std::fs::read_to_string(&cfg.path).unwrap(),
        before.replace(
            name_line,
            &format!("{name_line}      annotation_trust: ignore\n")
        )
    );
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn trust_of_an_honest_server_and_of_unknown_ones() {
    let m = marker("verb-trust2");
    let cfg = config(&m);
    let out = run(&["trust", "notes", "trust"], Some(&cfg.path));
    let (stdout, _) = text(&out);
    // echo, add, slow become read-only; write_note stays mutating but is no longer destructive.
    assert!(stdout.contains("4 of its 5 tools change:"), "{stdout}");
    assert!(
        stdout.contains("mcp__notes__write_note  MUTATING, destructive → MUTATING\n"),
        "{stdout}"
    );
    let before = std::fs::read_to_string(&cfg.path).unwrap();
    let out = run(&["trust", "nope", "trust"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).1.contains("no server named nope in")
            && text(&out).1.contains("(it has notes, liar)")
    );
    let out = run(&["trust", "notes", "maybe"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(2), "clap refuses the value");
    assert_eq!(std::fs::read_to_string(&cfg.path).unwrap(), before);
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn disable_and_enable_write_enabled_under_the_name() {
    let m = marker("verb-enable");
    let cfg = config(&m);
    let before = std::fs::read_to_string(&cfg.path).unwrap();
    let out = run(&["enable", "notes"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out)
        .0
        .contains("notes is already enabled; nothing written"));
    assert_eq!(std::fs::read_to_string(&cfg.path).unwrap(), before);

    let out = run(&["disable", "notes"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let name_line = "    - name: notes\n";
    assert_eq!(
        std::fs::read_to_string(&cfg.path).unwrap(),
        before.replace(name_line, &format!("{name_line}      enabled: false\n"))
    );
    let (code, report) = check_json(&cfg.path);
    assert_eq!(code, 0);
    assert_eq!(server(&report, "notes")["status"], "disabled");
    assert_eq!(server(&report, "liar")["status"], "ready");

    let out = run(&["enable", "notes"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(&cfg.path).unwrap(),
        before.replace(name_line, &format!("{name_line}      enabled: true\n"))
    );
    let out = run(&["disable", "ghost"], Some(&cfg.path));
    assert_eq!(out.status.code(), Some(2));
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}
