//! The rewake mapper (seed §7.2, `McpNotificationMapper`): which server notifications become
//! external events, by the `notifications.rewake` rules of the config. Pure: a notification in,
//! the events it makes out; the runtime delivers them to its driver.
//!
//! Separate from `notify.rs` because the listener SPI is neutral (logs, progress, list changes
//! flow through it too) and rewake is one consumer of it among others (seed D9).

use serde::Serialize;
use serde_json::Value;

use super::notify::McpNotification;
use crate::config::RewakeRule;

/// A notification that matched a rewake rule: the external event it becomes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExternalEvent {
    /// The rule's event name.
    pub event: String,
    /// The rule's index in `notifications.rewake`.
    pub rule: usize,
    /// The server that sent the notification.
    pub server: String,
    /// Its method.
    pub method: String,
    /// Its params, as sent.
    pub params: Value,
}

/// Maps notifications to external events by the rewake rules.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RewakeMapper {
    rules: Vec<RewakeRule>,
}

impl RewakeMapper {
    pub fn new(rules: Vec<RewakeRule>) -> Self {
        RewakeMapper { rules }
    }

    /// Whether no rule could ever match (nothing to do per notification).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// One event per rule the notification matches, in rule order: same server, same method,
    /// and every `match` path present in its params with an equal value.
    pub fn map(&self, notification: &McpNotification) -> Vec<ExternalEvent> {
        self.rules
            .iter()
            .enumerate()
            .filter(|(_, rule)| {
                rule.server == notification.server
                    && rule.method == notification.method
                    && rule
                        .matches
                        .iter()
                        .all(|(path, want)| lookup(&notification.params, path) == Some(want))
            })
            .map(|(index, rule)| ExternalEvent {
                event: rule.event.clone(),
                rule: index,
                server: notification.server.clone(),
                method: notification.method.clone(),
                params: notification.params.clone(),
            })
            .collect()
    }
}

/// The value at a dotted `path` in `value`: object keys, or array indexes for numbers.
fn lookup<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(value, |here, segment| match here {
        Value::Object(map) => map.get(segment),
        Value::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    fn rule(server: &str, method: &str, matches: &[(&str, Value)], event: &str) -> RewakeRule {
        RewakeRule {
            server: server.into(),
            method: method.into(),
            matches: matches
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
            event: event.into(),
        }
    }

    fn note(server: &str, method: &str, params: Value) -> McpNotification {
        McpNotification {
            server: server.into(),
            method: method.into(),
            params,
        }
    }

    const LOG: &str = "notifications/message";

    #[test]
    fn a_matching_notification_becomes_an_event() {
        let mapper = RewakeMapper::new(vec![rule(
            "notes",
            LOG,
            &[
                ("level", json!("info")),
                ("data", json!("saved note \"todo\"")),
            ],
            "todo-saved",
        )]);
        let params =
            json!({"level": "info", "logger": "aimon-demo", "data": "saved note \"todo\""});
        let events = mapper.map(&note("notes", LOG, params.clone()));
        assert_eq!(
            events,
            vec![ExternalEvent {
                event: "todo-saved".into(),
                rule: 0,
                server: "notes".into(),
                method: LOG.into(),
                params,
            }]
        );
    }

    #[test]
    fn other_servers_methods_and_values_are_ignored() {
        let mapper = RewakeMapper::new(vec![rule("notes", LOG, &[("level", json!("info"))], "e")]);
        let info = json!({"level": "info"});
        assert!(mapper.map(&note("other", LOG, info.clone())).is_empty());
        assert!(mapper
            .map(&note("notes", "notifications/progress", info))
            .is_empty());
        assert!(mapper
            .map(&note("notes", LOG, json!({"level": "debug"})))
            .is_empty());
        assert!(mapper.map(&note("notes", LOG, json!({}))).is_empty());
        assert!(mapper.map(&note("notes", LOG, Value::Null)).is_empty());
        // The JSON type counts: "1" is not 1.
        let typed = RewakeMapper::new(vec![rule("notes", LOG, &[("n", json!(1))], "e")]);
        assert!(typed.map(&note("notes", LOG, json!({"n": "1"}))).is_empty());
        assert_eq!(typed.map(&note("notes", LOG, json!({"n": 1}))).len(), 1);
    }

    #[test]
    fn paths_reach_into_objects_and_arrays() {
        let mapper = RewakeMapper::new(vec![rule(
            "s",
            "m",
            &[
                ("data.items.1.kind", json!("done")),
                ("data.ok", json!(true)),
            ],
            "e",
        )]);
        let hit = json!({"data": {"ok": true, "items": [{"kind": "new"}, {"kind": "done"}]}});
        assert_eq!(mapper.map(&note("s", "m", hit)).len(), 1);
        let miss = json!({"data": {"ok": true, "items": [{"kind": "done"}]}});
        assert!(mapper.map(&note("s", "m", miss)).is_empty());
        let not_a_container = json!({"data": "text"});
        assert!(mapper.map(&note("s", "m", not_a_container)).is_empty());
    }

    #[test]
    fn no_match_clause_matches_every_notification_of_the_method_and_rules_all_fire() {
        let mapper = RewakeMapper::new(vec![
            rule("s", "m", &[], "any"),
            rule("s", "m", &[("x", json!(1))], "one"),
            rule("s", "other", &[], "never"),
        ]);
        let events = mapper.map(&note("s", "m", json!({"x": 1})));
        let names: Vec<(&str, usize)> = events.iter().map(|e| (e.event.as_str(), e.rule)).collect();
        assert_eq!(names, [("any", 0), ("one", 1)]);
        assert!(RewakeMapper::default().is_empty());
        assert!(RewakeMapper::default()
            .map(&note("s", "m", Value::Null))
            .is_empty());
    }
}
