//! Tests of the lenient schema validator and the defaults skeleton.

use super::*;
use serde_json::json;

fn errors(schema: Value, args: Value) -> Vec<String> {
    match validate(&schema, &args) {
        Ok(()) => Vec::new(),
        Err(errors) => errors,
    }
}

#[test]
fn type_mismatch_names_the_path() {
    let schema = json!({"type": "object", "properties": {"body": {"type": "string"}}});
    assert_eq!(
        errors(schema, json!({"body": 3})),
        vec!["/body: expected a string, got a number"]
    );
}

#[test]
fn root_type_mismatch_uses_slash() {
    assert_eq!(
        errors(json!({"type": "object"}), json!("x")),
        vec!["/: expected an object, got a string"]
    );
}

#[test]
fn type_arrays_and_integer() {
    let schema = json!({"type": ["integer", "null"]});
    assert!(validate(&schema, &json!(3)).is_ok());
    assert!(validate(&schema, &json!(3.0)).is_ok());
    assert!(validate(&schema, &Value::Null).is_ok());
    assert_eq!(
        errors(schema, json!(2.5)),
        vec!["/: expected an integer or null, got a number"]
    );
    assert!(validate(&json!({"type": "number"}), &json!(2.5)).is_ok());
    assert!(validate(&json!({"type": "integer"}), &json!(-7)).is_ok());
}

#[test]
fn unknown_type_names_are_lenient() {
    assert!(validate(&json!({"type": "date"}), &json!(1)).is_ok());
    assert!(validate(&json!({"type": 5}), &json!(1)).is_ok());
}

#[test]
fn required_properties() {
    let schema = json!({"type": "object", "required": ["path", "mode"]});
    assert_eq!(
        errors(schema, json!({"path": "a"})),
        vec!["/: missing required property \"mode\""]
    );
}

#[test]
fn nested_properties_are_checked_recursively() {
    let schema = json!({
        "type": "object",
        "properties": {"opts": {"type": "object", "properties": {"depth": {"type": "integer"}},
                                "required": ["depth"]}}
    });
    assert_eq!(
        errors(schema.clone(), json!({"opts": {"depth": "deep"}})),
        vec!["/opts/depth: expected an integer, got a string"]
    );
    assert_eq!(
        errors(schema, json!({"opts": {}})),
        vec!["/opts: missing required property \"depth\""]
    );
}

#[test]
fn additional_properties_only_when_the_schema_says_so() {
    let open = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    assert!(validate(&open, &json!({"a": "x", "b": 1})).is_ok());

    let closed = json!({"properties": {"a": {}}, "additionalProperties": false});
    assert_eq!(
        errors(closed, json!({"a": 1, "b/c": 2})),
        vec!["/b~1c: unexpected property"]
    );

    let typed = json!({"properties": {}, "additionalProperties": {"type": "number"}});
    assert!(validate(&typed, &json!({"x": 1})).is_ok());
    assert_eq!(
        errors(typed, json!({"x": "1"})),
        vec!["/x: expected a number, got a string"]
    );

    let with_patterns = json!({"additionalProperties": false, "patternProperties": {"^x": {}}});
    assert!(validate(&with_patterns, &json!({"xy": 1, "z": 2})).is_ok());
}

#[test]
fn enum_and_const() {
    let schema = json!({"enum": ["a", "b", 1]});
    assert!(validate(&schema, &json!("a")).is_ok());
    assert!(validate(&schema, &json!(1.0)).is_ok());
    assert_eq!(
        errors(schema, json!("c")),
        vec!["/: must be one of \"a\", \"b\", 1"]
    );
    assert!(validate(&json!({"const": {"k": [1, 2]}}), &json!({"k": [1, 2]})).is_ok());
    assert_eq!(errors(json!({"const": 5}), json!(6)), vec!["/: must be 5"]);
}

#[test]
fn items_single_and_positional() {
    let schema = json!({"type": "array", "items": {"type": "string"}});
    assert_eq!(
        errors(schema, json!(["a", 2, "c", false])),
        vec![
            "/1: expected a string, got a number",
            "/3: expected a string, got a boolean"
        ]
    );
    let tuple = json!({"prefixItems": [{"type": "string"}, {"type": "integer"}]});
    assert!(validate(&tuple, &json!(["a", 1, {"extra": true}])).is_ok());
    assert_eq!(
        errors(tuple, json!([1])),
        vec!["/0: expected a string, got a number"]
    );
    let old_tuple = json!({"items": [{"type": "boolean"}]});
    assert_eq!(
        errors(old_tuple, json!(["no"])),
        vec!["/0: expected a boolean, got a string"]
    );
}

#[test]
fn numeric_bounds() {
    let schema = json!({"minimum": 1, "maximum": 10});
    assert!(validate(&schema, &json!(1)).is_ok());
    assert!(validate(&schema, &json!(10)).is_ok());
    assert_eq!(
        errors(schema.clone(), json!(0)),
        vec!["/: must be at least 1"]
    );
    assert_eq!(errors(schema, json!(10.5)), vec!["/: must be at most 10"]);
    let exclusive = json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1});
    assert_eq!(
        errors(exclusive, json!(0)),
        vec!["/: must be greater than 0"]
    );
    // Draft-4 boolean exclusives are ignored, not misread.
    assert!(validate(&json!({"exclusiveMinimum": true}), &json!(0)).is_ok());
}

#[test]
fn string_lengths_count_characters() {
    let schema = json!({"minLength": 2, "maxLength": 3});
    assert!(validate(&schema, &json!("éé")).is_ok());
    assert_eq!(
        errors(schema.clone(), json!("a")),
        vec!["/: must be at least 2 characters long"]
    );
    assert_eq!(
        errors(schema, json!("abcd")),
        vec!["/: must be at most 3 characters long"]
    );
}

#[test]
fn keywords_for_other_types_do_not_apply() {
    let schema = json!({"minLength": 5, "minimum": 3, "required": ["x"], "items": false});
    assert!(validate(&schema, &json!(true)).is_ok());
    assert!(validate(&schema, &json!(7)).is_ok());
}

#[test]
fn ref_and_unknown_keywords_are_ignored() {
    let schema = json!({
        "$ref": "#/definitions/nope",
        "anyOf": [{"type": "string"}],
        "x-vendor": {"type": "string"},
        "properties": {"a": {"$ref": "#/x"}}
    });
    assert!(validate(&schema, &json!({"a": 1})).is_ok());
}

#[test]
fn weird_schemas_never_panic() {
    for schema in [
        json!(true),
        json!(null),
        json!(3),
        json!("string"),
        json!([1, 2]),
        json!({"type": []}),
        json!({"properties": 5, "required": "x", "enum": "a", "items": 3}),
        json!({"properties": {"a": 7}, "additionalProperties": "no"}),
        json!({"minimum": "1", "maxLength": -1, "minLength": 1.5}),
    ] {
        assert!(
            validate(&schema, &json!({"a": [1, {"b": null}]})).is_ok(),
            "{schema}"
        );
    }
    assert_eq!(
        errors(json!(false), json!({})),
        vec!["/: no value is allowed here"]
    );
    assert_eq!(
        errors(json!({"properties": {"a": false}}), json!({"a": 1})),
        vec!["/a: no value is allowed here"]
    );
}

#[test]
fn reports_every_problem() {
    let schema = json!({
        "type": "object",
        "required": ["a"],
        "properties": {"b": {"type": "string"}, "c": {"enum": [1]}}
    });
    assert_eq!(errors(schema, json!({"b": 1, "c": 2})).len(), 3);
}

#[test]
fn skeleton_has_defaults_and_empty_required_values() {
    let schema = json!({
        "type": "object",
        "required": ["path", "count", "flag", "tags", "mode", "opts", "anything", "maybe"],
        "properties": {
            "path": {"type": "string"},
            "count": {"type": "integer"},
            "flag": {"type": "boolean"},
            "tags": {"type": "array"},
            "mode": {"enum": ["fast", "slow"]},
            "opts": {"type": "object", "properties": {"depth": {"default": 2}}},
            "anything": {},
            "maybe": {"type": ["null", "string"]},
            "limit": {"type": "integer", "default": 10},
            "optional": {"type": "string"}
        }
    });
    assert_eq!(
        defaults_skeleton(&schema),
        json!({
            "path": "", "count": 0, "flag": false, "tags": [], "mode": "fast",
            "opts": {"depth": 2}, "anything": null, "maybe": "", "limit": 10
        })
    );
}

#[test]
fn skeleton_of_odd_schemas_is_an_empty_object() {
    for schema in [
        json!(true),
        json!(null),
        json!({"properties": []}),
        json!({}),
    ] {
        assert_eq!(defaults_skeleton(&schema), json!({}));
    }
}
