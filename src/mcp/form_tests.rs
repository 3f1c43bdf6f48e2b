//! Tests of `form.rs`: a schema becomes fields, typed text becomes checked values, and an
//! answer it did not type is checked against the same fields.

use super::*;
use serde_json::json;

#[test]
fn a_tool_schema_becomes_fields_with_json_for_the_rest() {
    let schema = json!({"type": "object", "properties": {
        "url": {"type": "string", "format": "uri", "description": "What to fetch"},
        "either": {"type": ["string", "integer"]},
        "headers": {"type": "object"},
        "max_length": {"type": "integer", "default": 5000},
        "paths": {"type": "array", "items": {"type": "string"}}
    }, "required": ["url"]});
    assert!(
        fields_of(&schema).is_err(),
        "an elicitation never gets a JSON field"
    );
    let fields = tool_fields_of(&schema);
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    // In the schema's order.
    assert_eq!(names, ["url", "either", "headers", "max_length", "paths"]);
    assert_eq!(fields[0].description.as_deref(), Some("What to fetch"));
    assert_eq!(
        fields[1].kind,
        FieldKind::Json {
            what: "string or integer".into()
        }
    );
    assert_eq!(
        fields[4].kind,
        FieldKind::Json {
            what: "list of string".into()
        }
    );
    assert_eq!(fields[3].initial_text(), "5000");
    let texts: Vec<String> = vec![
        "https://example.com".into(),
        String::new(),
        "{\"a\": 1}".into(),
        "5000".into(),
        "[\"x\", \"y\"]".into(),
    ];
    let content = content_of(&fields, &texts).expect("valid");
    assert_eq!(
        Value::Object(content),
        json!({"url": "https://example.com", "headers": {"a": 1}, "max_length": 5000, "paths": ["x", "y"]})
    );
    let bad = vec![
        String::from("https://u"),
        String::new(),
        "{".into(),
        String::new(),
        String::new(),
    ];
    let problems = content_of(&fields, &bad).expect_err("bad JSON");
    assert!(
        problems[0].starts_with("headers is not valid JSON"),
        "{problems:?}"
    );
}

/// The schema of server-everything's `trigger-elicitation-request`, cut down.
fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "String"},
            "check": {"type": "boolean"},
            "email": {"type": "string", "format": "email"},
            "birthdate": {"type": "string", "format": "date"},
            "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
            "number": {"type": "number", "minimum": 0, "maximum": 1000, "default": 2.5},
            "friend": {"type": "string", "enum": ["Monica", "Rachel"], "default": "Monica"},
            "hero": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"}]},
            "pets": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"]},
            "fish": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Trout"}, {"const": "f3", "title": "Cod"}]}},
        },
        "required": ["name"],
    })
}

#[test]
fn builds_every_kind_of_field() {
    let fields = fields_of(&schema()).unwrap();
    let by = |n: &str| fields.iter().find(|f| f.name == n).unwrap();
    // In the schema's order.
    assert_eq!(fields[0].name, "name");
    assert_eq!(fields[1].name, "check");
    assert!(by("name").required && !by("check").required);
    assert_eq!(by("name").label(), "String");
    assert_eq!(by("check").kind, FieldKind::Boolean);
    assert!(matches!(
        by("email").kind,
        FieldKind::Text {
            format: Some(TextFormat::Email),
            ..
        }
    ));
    assert!(matches!(
        by("integer").kind,
        FieldKind::Number {
            integer: true,
            minimum: Some(1.0),
            maximum: Some(100.0)
        }
    ));
    let FieldKind::Choice(heroes) = &by("hero").kind else {
        panic!("{:?}", by("hero"));
    };
    assert_eq!(heroes[0].label, "Superman");
    let FieldKind::Choice(pets) = &by("pets").kind else {
        panic!();
    };
    assert_eq!(
        (pets[1].value.as_str(), pets[1].label.as_str()),
        ("pet-2", "Dogs")
    );
    assert!(matches!(by("fish").kind, FieldKind::MultiChoice { .. }));
    assert_eq!(
        defaults_of(&fields),
        json!({"integer": 42, "number": 2.5, "friend": "Monica"})
            .as_object()
            .unwrap()
            .clone()
    );
    assert_eq!(by("integer").initial_text(), "42");
    assert!(fields_of(&json!({"properties": {"o": {"type": "object"}}})).is_err());
}

#[test]
fn typed_text_becomes_checked_values() {
    let fields = fields_of(&schema()).unwrap();
    let texts = |pairs: &[(&str, &str)]| -> Vec<String> {
        fields
            .iter()
            .map(|f| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == f.name)
                    .map_or_else(|| f.initial_text(), |(_, t)| t.to_string())
            })
            .collect()
    };
    let content = content_of(
        &fields,
        &texts(&[
            ("name", "Ada"),
            ("check", "true"),
            ("email", "ada@example.org"),
            ("birthdate", "2000-02-29"),
            ("hero", "hero-1"),
            ("fish", "f1, f3"),
        ]),
    )
    .unwrap();
    assert_eq!(content["name"], "Ada");
    assert_eq!(content["check"], true);
    assert_eq!(content["integer"], 42);
    assert_eq!(content["fish"], json!(["f1", "f3"]));
    assert!(!content.contains_key("pets"));
    assert!(check_content(&fields, &content).is_ok());

    let problems = content_of(
        &fields,
        &texts(&[
            ("name", ""),
            ("email", "not-an-email"),
            ("birthdate", "2001-02-29"),
            ("integer", "101"),
            ("number", "1.5x"),
            ("friend", "Joey"),
            ("fish", "f1, f2, f3"),
        ]),
    )
    .unwrap_err();
    assert_eq!(problems.len(), 7, "{problems:?}");
    assert!(problems[0].contains("String is required"), "{problems:?}");
}

#[test]
fn checks_an_answer_it_did_not_type() {
    let fields = fields_of(&schema()).unwrap();
    let ok = json!({"name": "x", "integer": 5});
    assert!(check_content(&fields, ok.as_object().unwrap()).is_ok());
    let bad = json!({"integer": "5", "extra": 1});
    let problems = check_content(&fields, bad.as_object().unwrap()).unwrap_err();
    assert_eq!(problems.len(), 3, "{problems:?}");
}

#[test]
fn optional_and_referenced_tool_arguments_are_their_plain_kind() {
    // As schemars writes an `Option<String>`, an `Option<Enum>` and a required enum.
    let schema = json!({
        "$defs": {
            "Level": {"enum": ["debug", "info", "error"], "type": "string"},
            "Action": {"oneOf": [{"const": "add"}, {"const": "remove"}], "type": "string", "enum": ["add", "remove"]}
        },
        "type": "object",
        "properties": {
            "question": {"type": ["string", "null"], "description": "Ask this"},
            "level": {"anyOf": [{"$ref": "#/$defs/Level"}, {"type": "null"}], "default": "info", "description": "Their level"},
            "action": {"$ref": "#/$defs/Action", "description": "What to do"},
            "loop": {"$ref": "#/$defs/Loop"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
        },
        "required": ["action"]
    });
    let fields = tool_fields_of(&schema);
    let of = |name: &str| {
        fields
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no field {name}"))
    };
    assert!(
        matches!(of("question").kind, FieldKind::Text { .. }),
        "{:?}",
        of("question")
    );
    assert_eq!(of("question").description.as_deref(), Some("Ask this"));
    match &of("level").kind {
        FieldKind::Choice(choices) => assert_eq!(choices.len(), 3),
        other => panic!("level: {other:?}"),
    }
    assert_eq!(of("level").default, Some(json!("info")));
    assert_eq!(of("level").description.as_deref(), Some("Their level"));
    assert!(
        matches!(of("action").kind, FieldKind::Choice(_)),
        "{:?}",
        of("action")
    );
    assert_eq!(of("action").description.as_deref(), Some("What to do"));
    // A reference that leads nowhere, and a real union, stay JSON.
    assert!(matches!(of("loop").kind, FieldKind::Json { .. }));
    assert!(matches!(of("either").kind, FieldKind::Json { .. }));
    // Plain text for an optional string: typed as is, not as JSON.
    assert_eq!(
        of("question").value_of("why not").ok(),
        Some(Some(json!("why not")))
    );
}
