//! `JsonText`: a JSON value held as its compact text, shared, parsed where it is used.
//!
//! A tool's input schema and annotations are read rarely (a call's argument check, a details
//! view, a model request) but held for every tool all the time. As a parsed `Value` a small
//! schema costs about 2 KiB (a B-tree node per object); as text it costs its length. The text
//! is written from a parsed value, its keys in the order they came (serde_json's
//! `preserve_order`: a tool's properties as its author wrote them, for forms and models), so
//! two values are the same text when they came the same. Clones share one allocation. What is read on every call (a tool's
//! schema, for the argument check) is parsed once, on first use, and kept: only the tools
//! that are called pay for a parsed copy.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// A JSON value as compact, canonical text (keys sorted), shared by its clones.
#[derive(Clone)]
pub struct JsonText(Arc<Held>);

struct Held {
    text: Box<str>,
    parsed: OnceLock<Box<Value>>,
}

impl PartialEq for JsonText {
    fn eq(&self, other: &JsonText) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for JsonText {}

impl std::hash::Hash for JsonText {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl JsonText {
    /// The text of `value`.
    pub fn from_value(value: &Value) -> JsonText {
        JsonText::written(serde_json::to_string(value))
    }

    /// The text of a JSON object.
    pub fn from_object(object: &Map<String, Value>) -> JsonText {
        JsonText::written(serde_json::to_string(object))
    }

    fn written(text: Result<String, serde_json::Error>) -> JsonText {
        // A `Value` always serializes (its keys are strings); `null` stands for the impossible.
        JsonText(Arc::new(Held {
            text: text.unwrap_or_else(|_| "null".to_string()).into_boxed_str(),
            parsed: OnceLock::new(),
        }))
    }

    /// The value, parsed again. Text written from a value always parses; `null` stands for
    /// the impossible rather than a panic.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.0.text).unwrap_or(Value::Null)
    }

    /// The value, parsed on first use and kept for the next (shared by the clones).
    pub fn parsed(&self) -> &Value {
        self.0.parsed.get_or_init(|| Box::new(self.to_value()))
    }

    /// The compact text.
    pub fn as_str(&self) -> &str {
        &self.0.text
    }
}

impl From<Value> for JsonText {
    fn from(value: Value) -> JsonText {
        JsonText::from_value(&value)
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Written as the JSON it holds (not as a string), parsed first so that a pretty printer
/// lays it out like any other value.
impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A number of a server's schema survives being kept as text: parsed from the page, written,
    /// parsed again, it is the same number (the fuzz target `tool_pages` found one that was not,
    /// 1.1111111111111115e17 coming back as …17e17, before serde_json parsed floats exactly).
    #[test]
    fn numbers_come_back_as_they_were() {
        for text in [
            "111111111111111151.1",
            "0.30000000000000004",
            "2.2250738585072014e-308",
            "1e308",
        ] {
            let value: Value = serde_json::from_str(&format!("{{\"op\":[{text}]}}")).unwrap();
            assert_eq!(JsonText::from_value(&value).to_value(), value, "{text}");
        }
    }

    #[test]
    fn text_is_compact_in_the_order_it_came_and_parses_back() {
        let a = JsonText::from(json!({"b": [true, null], "a": {"type": "string"}}));
        assert_eq!(a.as_str(), r#"{"b":[true,null],"a":{"type":"string"}}"#);
        assert_eq!(
            a.to_value(),
            json!({"a": {"type": "string"}, "b": [true, null]})
        );
        let b = JsonText::from(json!({"b": [true, null], "a": {"type": "string"}}));
        assert_eq!(a, b);
        assert_ne!(a, JsonText::from(json!({})));
        // The same value in another order is another text.
        assert_ne!(
            a,
            JsonText::from(json!({"a": {"type": "string"}, "b": [true, null]}))
        );
    }

    #[test]
    fn parsed_once_and_shared_by_the_clones() {
        let a = JsonText::from(json!({"type": "object", "required": ["x"]}));
        let b = a.clone();
        assert_eq!(a.parsed(), &a.to_value());
        assert!(std::ptr::eq(a.parsed(), b.parsed()));
        // Equality and hashing go by the text, parsed or not.
        assert_eq!(
            a,
            JsonText::from(json!({"type": "object", "required": ["x"]}))
        );
    }

    #[test]
    fn it_serializes_as_the_json_it_holds() {
        let text = JsonText::from(json!({"readOnlyHint": true}));
        let outer = json!({"annotations": text});
        assert_eq!(outer, json!({"annotations": {"readOnlyHint": true}}));
        assert_eq!(
            serde_json::to_string_pretty(&[&text]).expect("serializes"),
            "[\n  {\n    \"readOnlyHint\": true\n  }\n]"
        );
    }

    #[test]
    fn an_object_gives_the_same_text_as_its_value() {
        let value = json!({"type": "object", "properties": {}});
        let Value::Object(map) = &value else {
            panic!("an object")
        };
        assert_eq!(JsonText::from_object(map), JsonText::from_value(&value));
    }
}
