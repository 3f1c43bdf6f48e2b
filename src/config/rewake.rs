//! The `notifications.rewake` rules (seed §7.2): which server notification becomes which
//! external event. Read and checked here, apart from `load.rs`, because the rules refer to the
//! servers (an unknown server is a located error) and carry match values of any JSON type.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::context::Context;
use super::error::ConfigErrorKind;
use super::spans::{child_path, index_path};
use super::RewakeRule;

/// The `notifications:` section as written.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping with `rewake`")]
pub(super) struct RawNotifications {
    #[serde(default)]
    pub(super) rewake: Option<Vec<RawRewake>>,
}

/// One rule as written.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a rewake rule mapping (server, method, match, event)"
)]
pub(super) struct RawRewake {
    server: String,
    method: String,
    #[serde(default, rename = "match")]
    matches: Option<BTreeMap<String, serde_yaml::Value>>,
    event: String,
}

/// Checks the rules against the servers named in the file (`known`): every rule names one of
/// them, and has a method, an event name and well-formed match paths. Each mistake is recorded
/// in `cx`; the rules without one are returned.
pub(super) fn rewake_rules(
    cx: &Context<'_>,
    raw: Vec<RawRewake>,
    known: &[String],
) -> Vec<RewakeRule> {
    raw.into_iter()
        .enumerate()
        .filter_map(|(i, rule)| rewake_rule(cx, i, rule, known))
        .collect()
}

fn rewake_rule(
    cx: &Context<'_>,
    i: usize,
    rule: RawRewake,
    known: &[String],
) -> Option<RewakeRule> {
    let node = index_path("notifications.rewake", i);
    let field = |name: &str| child_path(&node, name);
    let mut ok = true;
    if !known.contains(&rule.server) {
        let mut names: Vec<&str> = known.iter().map(String::as_str).collect();
        names.sort_unstable();
        names.dedup();
        let listed = if names.is_empty() {
            "no servers are configured".to_string()
        } else {
            format!("configured: {}", names.join(", "))
        };
        cx.report(cx.error(
            ConfigErrorKind::Invalid,
            &field("server"),
            format!(
                "{}: unknown server {:?} ({listed})",
                field("server"),
                rule.server
            ),
        ));
        ok = false;
    }
    for (key, value) in [("method", &rule.method), ("event", &rule.event)] {
        if value.trim().is_empty() {
            cx.report(cx.error(
                ConfigErrorKind::Invalid,
                &field(key),
                format!("{} must not be empty", field(key)),
            ));
            ok = false;
        }
    }
    let mut matches = BTreeMap::new();
    for (path, value) in rule.matches.unwrap_or_default() {
        let at = child_path(&field("match"), &path);
        if path.split('.').any(str::is_empty) {
            cx.report(cx.key_error(
                &at,
                format!("{}: {path:?} is not a dotted path (a.b.c)", field("match")),
            ));
            ok = false;
            continue;
        }
        match serde_json::to_value(&value) {
            Ok(value) => {
                matches.insert(path, value);
            }
            Err(e) => {
                cx.report(cx.error(
                    ConfigErrorKind::Invalid,
                    &at,
                    format!("{at}: not a plain value: {e}"),
                ));
                ok = false;
            }
        }
    }
    ok.then_some(RewakeRule {
        server: rule.server,
        method: rule.method,
        matches,
        event: rule.event,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use crate::config::{load_str, Config, ConfigError};

    fn load(text: &str) -> Result<Config, ConfigError> {
        load_str(Path::new("/etc/aimon/cfg.yaml"), text, &|_| None)
    }

    const SERVERS: &str =
        "mcp:\n  servers:\n    - {name: notes, command: x}\n    - {name: web, command: y}\n";

    #[test]
    fn rules_load_in_order_with_their_matches() {
        let text = format!(
            "{SERVERS}notifications:\n  rewake:\n    - server: notes\n      method: notifications/message\n      match:\n        level: info\n        data.n: 2\n        data.ok: true\n      event: note-written\n    - {{server: web, method: notifications/resources/updated, event: page}}\n"
        );
        let config = load(&text).expect("loads");
        let [first, second] = config.notifications.rewake.as_slice() else {
            panic!("two rules: {:?}", config.notifications.rewake);
        };
        assert_eq!(first.server, "notes");
        assert_eq!(first.method, "notifications/message");
        assert_eq!(first.event, "note-written");
        assert_eq!(first.matches.get("level"), Some(&json!("info")));
        assert_eq!(first.matches.get("data.n"), Some(&json!(2)));
        assert_eq!(first.matches.get("data.ok"), Some(&json!(true)));
        assert_eq!(second.server, "web");
        assert!(second.matches.is_empty());
    }

    #[test]
    fn bad_rules_are_located_errors() {
        let cases = [
            (
                format!("{SERVERS}notifications:\n  rewake:\n    - {{server: nope, method: m, event: e}}\n"),
                "7:16: notifications.rewake[0].server: unknown server \"nope\" (configured: notes, web)",
            ),
            (
                "notifications:\n  rewake:\n    - {server: a, method: m, event: e}\n".to_string(),
                "3:16: notifications.rewake[0].server: unknown server \"a\" (no servers are configured)",
            ),
            (
                format!("{SERVERS}notifications:\n  rewake:\n    - {{server: notes, method: \" \", event: e}}\n"),
                "7:31: notifications.rewake[0].method must not be empty",
            ),
            (
                format!("{SERVERS}notifications:\n  rewake:\n    - server: notes\n      method: m\n      event: e\n      match: {{a..b: 1}}\n"),
                "10:15: notifications.rewake[0].match: \"a..b\" is not a dotted path (a.b.c)",
            ),
            (
                format!("{SERVERS}notifications:\n  rewake:\n    - {{server: notes, method: m}}\n"),
                "7:7: notifications.rewake[0]: missing `event`",
            ),
            (
                format!("{SERVERS}notifications:\n  rewake:\n    - {{server: notes, method: m, event: e, when: x}}\n"),
                "7:44: notifications.rewake[0]: unknown key `when`, expected one of `server`, `method`, `match`, `event`",
            ),
        ];
        for (text, expected) in cases {
            let err = load(&text).expect_err(&text);
            assert_eq!(
                err.to_string(),
                format!("/etc/aimon/cfg.yaml:{expected}"),
                "{text}"
            );
        }
    }
}
