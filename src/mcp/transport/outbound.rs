//! The line a message to a server goes out as.
//!
//! rmcp writes a request's `params` through a view that merges the two places its `_meta` can
//! be: it serializes the params into a `Value`, takes any `_meta` out of it, clones the
//! request's own metadata (at revision 2026-07-28 the client's info and capabilities, on every
//! request) and writes the result. For a `tools/call`, the request on every call's path, that
//! was a tenth of the stack's own CPU per call (`perf` on sequential calls against the demo
//! server). When only the request's metadata holds a `_meta` (the params have none of their
//! own, and there is no legacy metadata to merge), this writes the same JSON straight from the
//! parts; anything else goes the general way.
//!
//! A `tools/call` over stdio does not go through rmcp at all (`direct.rs`): its line is written
//! here with the `_meta` rmcp would have given it, the session's part of it serialized once.

// Logging is SEP-2577-deprecated in rmcp; the servers of today still use it.
#![allow(deprecated)]

use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientRequest, JsonObject, JsonRpcMessage, LoggingLevel,
    MetaObject, ProgressToken, RequestId, RequestMetaObject,
};

/// Where a request's log level goes in its `_meta` at 2026-07-28 (rmcp's `set_log_level`).
const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";

/// `item` as one line of JSON, with its newline.
pub fn line(item: &ClientJsonRpcMessage) -> serde_json::Result<Vec<u8>> {
    if let Some(line) = call_line(item)? {
        return Ok(line);
    }
    let mut bytes = serde_json::to_vec(item)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// A `tools/call` request written from its parts, or `None` when it must go the general way.
fn call_line(item: &ClientJsonRpcMessage) -> serde_json::Result<Option<Vec<u8>>> {
    let JsonRpcMessage::Request(request) = item else {
        return Ok(None);
    };
    let ClientRequest::CallToolRequest(call) = &request.request else {
        return Ok(None);
    };
    let meta = call.extensions.get::<RequestMetaObject>();
    call_frame(&request.id, call, 0, |out| {
        let Some(meta) = meta else {
            return Ok(false);
        };
        out.extend_from_slice(br#""_meta":"#);
        serde_json::to_writer(out, &meta.0 .0)?;
        Ok(true)
    })
}

/// The line of `call` under `id`, with its params as serde writes them: `meta` writes what
/// comes before them in the params object (the `_meta` entry; true if it wrote anything).
/// `None` when the call must go the general way (`writes_directly`).
fn call_frame(
    id: &RequestId,
    call: &CallToolRequest,
    room: usize,
    meta: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<bool>,
) -> serde_json::Result<Option<Vec<u8>>> {
    if !writes_directly(call) {
        return Ok(None);
    }
    let params = serde_json::to_vec(&call.params)?;
    let Some(fields) = params.strip_prefix(b"{") else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(params.len() + room + 256);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut out, id)?;
    out.extend_from_slice(br#","method":"tools/call","params":{"#);
    if meta(&mut out)? && fields != b"}" {
        out.push(b',');
    }
    out.extend_from_slice(fields);
    out.extend_from_slice(b"}\n");
    Ok(Some(out))
}

/// What rmcp puts in the `_meta` of every request of a session (at revision 2026-07-28 the
/// protocol version and the client's info and capabilities; nothing before it), serialized
/// once for the session: its fields without the braces, and its keys.
#[derive(Debug, Clone, Default)]
pub struct SessionMeta {
    fields: String,
    keys: Vec<String>,
}

impl SessionMeta {
    pub fn new(meta: &JsonObject) -> serde_json::Result<SessionMeta> {
        let text = serde_json::to_string(meta)?;
        let fields = text
            .strip_prefix('{')
            .and_then(|t| t.strip_suffix('}'))
            .unwrap_or_default()
            .to_string();
        Ok(SessionMeta {
            fields,
            keys: meta.keys().cloned().collect(),
        })
    }
}

/// Whether `call` can be written from its parts: its params hold no `_meta` of their own and
/// it carries no legacy metadata to merge.
pub fn writes_directly(call: &CallToolRequest) -> bool {
    call.params.meta.is_none() && call.extensions.get::<MetaObject>().is_none()
}

/// A `tools/call` as rmcp would write it with request id `id`, log level `level` (set on the
/// request) and progress token `token`: its `_meta` holds the session's part, the request's
/// own entries (rmcp's session values win over them, as its setters overwrite), the level and
/// the token. `None` when the request must go rmcp's way.
pub fn call_line_with(
    id: &RequestId,
    session: &SessionMeta,
    call: &CallToolRequest,
    level: Option<LoggingLevel>,
    token: &ProgressToken,
) -> serde_json::Result<Option<Vec<u8>>> {
    call_frame(id, call, session.fields.len(), |out| {
        out.extend_from_slice(br#""_meta":{"#);
        out.extend_from_slice(session.fields.as_bytes());
        let mut empty = session.fields.is_empty();
        let skipped = |k: &str| {
            k == "progressToken"
                || (level.is_some() && k == LOG_LEVEL_KEY)
                || session.keys.iter().any(|s| s == k)
        };
        let own = call.extensions.get::<RequestMetaObject>();
        for (key, value) in own.iter().flat_map(|m| m.0 .0.iter()) {
            if !skipped(key) {
                entry(out, &mut empty, key, value)?;
            }
        }
        if let Some(level) = level {
            entry(out, &mut empty, LOG_LEVEL_KEY, &level)?;
        }
        entry(out, &mut empty, "progressToken", token)?;
        out.push(b'}');
        Ok(true)
    })
}

/// [`call_line_with`] for the direct path: an error (for the caller to give up the direct way)
/// when the call cannot be written from its parts.
pub fn direct_call_line(
    id: &RequestId,
    session: &SessionMeta,
    call: &CallToolRequest,
    level: Option<LoggingLevel>,
    token: &ProgressToken,
) -> std::io::Result<Vec<u8>> {
    call_line_with(id, session, call, level, token)
        .map_err(std::io::Error::other)?
        .ok_or_else(|| std::io::Error::other("a call with a _meta of its own goes via rmcp"))
}

/// `"key":value` into an object being written, after a comma unless it is the first.
fn entry(
    out: &mut Vec<u8>,
    empty: &mut bool,
    key: &str,
    value: &impl serde::Serialize,
) -> serde_json::Result<()> {
    if !std::mem::take(empty) {
        out.push(b',');
    }
    serde_json::to_writer(&mut *out, key)?;
    out.push(b':');
    serde_json::to_writer(&mut *out, value)
}

#[cfg(test)]
#[path = "outbound_tests.rs"]
mod tests;
