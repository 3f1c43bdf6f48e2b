//! Faults of the demo server's stdio wire, for the fault matrix: what the client sends is seen
//! (and `server/discover` perhaps dropped) before the server reads it, and what the server
//! answers is rewritten on its way out — an answer that is not UTF-8, that holds both `result`
//! and `error`, that is larger than any line limit, a tool list with malformed or duplicate
//! entries. rmcp's server writes only well-formed messages, so these are made here, on the
//! bytes.
//!
//! Separate from the handler, which stays well-behaved; only `serve_stdio` puts this between
//! the pipes and the server.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// What the wire does to the conversation; the default touches nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WireFaults {
    /// Never answer `server/discover`: the request is dropped before the server sees it (an
    /// old server that ignores a method it does not know instead of refusing it).
    pub ignore_discover: bool,
    /// The answer to this method carries a byte that is not UTF-8.
    pub bad_utf8: Option<String>,
    /// The answer to this method carries both `result` and `error`.
    pub result_and_error: Option<String>,
    /// The answer to `tools/call` is padded to at least this many bytes.
    pub huge_answer: Option<usize>,
    /// The `tools/list` answer also holds malformed entries (no `inputSchema`, one that is a
    /// string or an array, no name, an entry that is not an object).
    pub malformed_tools: bool,
    /// The `tools/list` answer lists `echo` a second time (after the first).
    pub duplicate_tool: bool,
}

impl WireFaults {
    /// Whether any fault is on (else the server talks to the pipes directly).
    pub fn any(&self) -> bool {
        *self != WireFaults::default()
    }
}

/// The names of the entries `malformed_tools` adds, in order (the one without a name and the
/// one that is not an object have none).
pub const MALFORMED_TOOLS: [&str; 3] = ["no_schema", "string_schema", "array_schema"];

/// Adds the malformed entries of `malformed_tools` to a page's `tools` (over stdio here, over
/// HTTP in `http.rs`).
pub fn add_malformed_tools(tools: &mut Vec<Value>) {
    tools.extend([
        json!({"name": MALFORMED_TOOLS[0], "description": "no inputSchema"}),
        json!({"name": MALFORMED_TOOLS[1], "inputSchema": "object"}),
        json!({"name": MALFORMED_TOOLS[2], "inputSchema": []}),
        json!({"description": "no name", "inputSchema": {"type": "object"}}),
        json!(42),
    ]);
}

/// Methods of the requests in flight, by the id's JSON text.
type Asked = Arc<Mutex<HashMap<String, String>>>;

/// Copies client lines from `input` to the server, noting each request's method.
pub async fn inbound<R, W>(input: R, mut server: W, faults: WireFaults, asked: Asked)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut lines = BufReader::new(input).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Ok(message) = serde_json::from_str::<Value>(&line) {
            if let (Some(id), Some(method)) = (
                message.get("id"),
                message.get("method").and_then(Value::as_str),
            ) {
                if faults.ignore_discover && method == "server/discover" {
                    continue;
                }
                asked
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(id.to_string(), method.to_string());
            }
        }
        let written = async {
            server.write_all(line.as_bytes()).await?;
            server.write_all(b"\n").await?;
            server.flush().await
        };
        if written.await.is_err() {
            return;
        }
    }
}

/// Copies server lines from `server` to `output`, rewriting answers as `faults` say.
pub async fn outbound<R, W>(server: R, mut output: W, faults: WireFaults, asked: Asked)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut lines = BufReader::new(server).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut bytes = rewrite(&line, &faults, &asked);
        bytes.push(b'\n');
        if output.write_all(&bytes).await.is_err() || output.flush().await.is_err() {
            return;
        }
    }
}

/// One outgoing line, rewritten if it answers a method a fault is about.
fn rewrite(line: &str, faults: &WireFaults, asked: &Asked) -> Vec<u8> {
    let Ok(mut message) = serde_json::from_str::<Value>(line) else {
        return line.as_bytes().to_vec();
    };
    let method = match (message.get("id"), message.get("result")) {
        (Some(id), Some(_)) => asked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id.to_string()),
        _ => None,
    };
    let Some(method) = method else {
        return line.as_bytes().to_vec();
    };
    let is = |m: &Option<String>| m.as_deref() == Some(method.as_str());
    let touched = match method.as_str() {
        "tools/list" => faults.malformed_tools || faults.duplicate_tool,
        "tools/call" => faults.huge_answer.is_some(),
        _ => false,
    } || is(&faults.result_and_error)
        || is(&faults.bad_utf8);
    if !touched {
        return line.as_bytes().to_vec();
    }
    if let Some(result) = message.get_mut("result") {
        if method == "tools/list" {
            if let Some(Value::Array(tools)) = result.get_mut("tools") {
                if faults.duplicate_tool {
                    let echo = tools.iter().find(|t| t["name"] == "echo").cloned();
                    if let Some(mut echo) = echo {
                        echo["description"] = json!("a second tool named echo");
                        tools.push(echo);
                    }
                }
                if faults.malformed_tools {
                    add_malformed_tools(tools);
                }
            }
        }
        if let (Some(size), "tools/call", Value::Object(fields)) =
            (faults.huge_answer, method.as_str(), &mut *result)
        {
            fields.insert("_meta".into(), json!({"pad": "x".repeat(size)}));
        }
    }
    if is(&faults.result_and_error) {
        message["error"] = json!({"code": -32603, "message": "and an error as well"});
    }
    let mut bytes = message.to_string().into_bytes();
    if is(&faults.bad_utf8) {
        // Into the first string value of the result: `…"result":{…"key":"` + 0xFF.
        let at = find(&bytes, b"\"result\"")
            .and_then(|r| find(&bytes[r..], b"\":\"").map(|q| r + q + 3));
        if let Some(at) = at {
            bytes.insert(at, 0xFF);
        }
    }
    bytes
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(id: i64, method: &str) -> Asked {
        let asked = Asked::default();
        asked
            .lock()
            .unwrap()
            .insert(id.to_string(), method.to_string());
        asked
    }

    #[test]
    fn answers_are_rewritten_only_for_their_method() {
        let call = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
        let faults = WireFaults {
            bad_utf8: Some("tools/call".into()),
            ..WireFaults::default()
        };
        let out = rewrite(call, &faults, &asked(3, "tools/call"));
        assert!(std::str::from_utf8(&out).is_err());
        let result = find(&out, b"\"result\"").expect("a result");
        assert!(find(&out[result..], b":\"\xff").is_some(), "{out:?}");
        // Another method's answer, or a line answering nothing asked, goes through as it is.
        assert_eq!(
            rewrite(call, &faults, &asked(3, "tools/list")),
            call.as_bytes()
        );
        assert_eq!(rewrite(call, &faults, &Asked::default()), call.as_bytes());
    }

    #[test]
    fn tool_lists_get_bad_and_duplicate_entries() {
        let list =
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{}}]}}"#;
        let faults = WireFaults {
            malformed_tools: true,
            duplicate_tool: true,
            result_and_error: Some("tools/list".into()),
            ..WireFaults::default()
        };
        let out: Value = serde_json::from_slice(&rewrite(list, &faults, &asked(1, "tools/list")))
            .expect("still JSON");
        let tools = out["result"]["tools"].as_array().expect("tools");
        assert_eq!(tools.len(), 7);
        assert_eq!(tools[1]["name"], "echo");
        assert!(out.get("error").is_some());
    }

    #[test]
    fn a_huge_answer_is_at_least_its_size() {
        let call = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#;
        let faults = WireFaults {
            huge_answer: Some(1000),
            ..WireFaults::default()
        };
        let out = rewrite(call, &faults, &asked(2, "tools/call"));
        assert!(out.len() > 1000, "{}", out.len());
    }
}
