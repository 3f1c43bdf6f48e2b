//! What a read of a resource gave, as JSON and back: `read --json` prints it, the daemon sends
//! it to a console, and an attached console reads it back (a blob as base64, with its size).

use base64::Engine;
use serde_json::{json, Value};

use super::ResourceContent;

/// The JSON of one part of a read.
pub fn resource_content_json(part: &ResourceContent) -> Value {
    match part {
        ResourceContent::Text {
            uri,
            mime_type,
            text,
        } => json!({"uri": uri, "mime_type": mime_type, "text": text}),
        ResourceContent::Blob {
            uri,
            mime_type,
            bytes,
        } => json!({
            "uri": uri,
            "mime_type": mime_type,
            "blob": base64::engine::general_purpose::STANDARD.encode(bytes),
            "size": bytes.len(),
        }),
    }
}

/// One part of a read from its JSON ([`resource_content_json`]'s); `None` if it is not one.
pub fn resource_content_from_json(v: &Value) -> Option<ResourceContent> {
    let uri = v.get("uri")?.as_str()?.to_string();
    let mime_type = v
        .get("mime_type")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(text) = v.get("text").and_then(Value::as_str) {
        return Some(ResourceContent::Text {
            uri,
            mime_type,
            text: text.to_string(),
        });
    }
    let blob = v.get("blob")?.as_str()?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .ok()?;
    Some(ResourceContent::Blob {
        uri,
        mime_type,
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_goes_to_json_and_back_whole() {
        let parts = [
            ResourceContent::Text {
                uri: "demo://readme".into(),
                mime_type: Some("text/markdown".into()),
                text: "# hi\n".into(),
            },
            ResourceContent::Blob {
                uri: "demo://logo".into(),
                mime_type: None,
                bytes: vec![0, 159, 255, 10],
            },
        ];
        for part in parts {
            let json = resource_content_json(&part);
            assert_eq!(resource_content_from_json(&json), Some(part));
        }
        assert_eq!(resource_content_from_json(&json!({"uri": "x"})), None);
        assert_eq!(
            resource_content_from_json(&json!({"uri": "x", "blob": "not base64!"})),
            None
        );
    }
}
