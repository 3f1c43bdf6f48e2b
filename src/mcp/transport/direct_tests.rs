//! The direct path against a server end we play by hand: the line it writes, the answer handed
//! back to the caller and not to rmcp, error answers, unreadable answers, and the end of the
//! connection.

#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, Implementation, LoggingLevel,
    ProtocolVersion, RequestMetaObject, ServerResult,
};
use rmcp::service::{RoleClient, ServiceError};
use rmcp::transport::Transport;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::super::lines::{LineTransport, StdoutIssues};
use super::super::outbound::SessionMeta;
use super::{Answer, DirectCalls};

struct Wire {
    transport: LineTransport,
    /// What the client writes, line by line.
    requests: tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
    /// Where the server's answers go.
    server: tokio::io::DuplexStream,
    issues: Arc<Mutex<StdoutIssues>>,
}

/// The caller's answer, or a failure if none comes within 10 s (the reader handed it
/// elsewhere).
async fn answer(rx: super::Reply) -> Answer {
    match tokio::time::timeout(std::time::Duration::from_secs(10), rx).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) => panic!("the reader dropped the caller"),
        Err(_) => panic!("no answer reached the caller"),
    }
}

impl Wire {
    /// The next line the client wrote, as JSON.
    async fn written(&mut self) -> Value {
        let line = self.requests.next_line().await.expect("read");
        serde_json::from_str(&line.expect("a line")).expect("json")
    }
}

fn wire() -> Wire {
    let (client_read, server) = tokio::io::duplex(1 << 16);
    let (server_read, client_write) = tokio::io::duplex(1 << 16);
    let (transport, issues) = super::super::lines::tests::over(client_read, client_write);
    Wire {
        transport,
        requests: BufReader::new(server_read).lines(),
        server,
        issues,
    }
}

/// The session's `_meta` part at 2026-07-28, as `DefaultMcpClient::with_direct` makes it.
fn session_meta() -> (RequestMetaObject, SessionMeta) {
    let mut meta = RequestMetaObject::default();
    meta.set_protocol_version(ProtocolVersion::V_2026_07_28);
    meta.set_client_info(Implementation::new("aimon-console", "0.1.0"));
    meta.set_client_capabilities(ClientCapabilities::default());
    let session = SessionMeta::new(&meta.0 .0).expect("serializes");
    (meta, session)
}

/// `echo` written the direct way with no session `_meta` and no level.
async fn send(direct: &DirectCalls) -> std::io::Result<super::Sent> {
    let ids = direct.ids();
    direct
        .send(&SessionMeta::default(), &echo(), None, ids)
        .await
}

fn echo() -> CallToolRequest {
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = json!({"text": "hi \"you\""}).as_object().cloned();
    CallToolRequest::new(params)
}

#[tokio::test]
async fn the_line_is_what_rmcp_would_write_and_the_answer_comes_back_to_the_caller() {
    let mut wire = wire();
    let (meta, session) = session_meta();
    let mut call = echo();
    // An entry of the request's own stays.
    let mut own = RequestMetaObject::default();
    own.0 .0.insert("trace".into(), json!("t-1"));
    call.extensions.insert(own);
    let direct = wire.transport.direct();
    let ids = direct.ids();
    let sent = direct
        .send(&session, &call, Some(LoggingLevel::Debug), ids)
        .await
        .expect("written");
    let ours = wire.written().await;
    // rmcp's own writing of the same request: the level set on it, rmcp's metadata over the
    // request's own, the token.
    let mut theirs_meta = call
        .extensions
        .get::<RequestMetaObject>()
        .cloned()
        .unwrap_or_default();
    theirs_meta.set_log_level(LoggingLevel::Debug);
    theirs_meta.0 .0.extend(meta.0 .0.clone());
    theirs_meta.set_progress_token(sent.progress_token.clone());
    let mut theirs_call = call.clone();
    theirs_call.extensions.insert(theirs_meta);
    let theirs = serde_json::to_value(rmcp::model::ClientJsonRpcMessage::request(
        rmcp::model::ClientRequest::CallToolRequest(theirs_call),
        sent.id.clone(),
    ))
    .expect("rmcp serializes");
    assert_eq!(ours, theirs);
    assert_eq!(
        ours["params"]["_meta"]["io.modelcontextprotocol/logLevel"],
        "debug"
    );

    let id = serde_json::to_string(&sent.id).expect("id");
    let reply = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"hi"}}]}}}}"#
    );
    wire.server
        .write_all(reply.as_bytes())
        .await
        .expect("write");
    wire.server.write_all(b"\n").await.expect("write");
    match answer(sent.rx).await {
        Ok(ServerResult::CallToolResult(result)) => {
            assert_eq!(result.content.len(), 1);
        }
        other => panic!("a tool's result, not {other:?}"),
    }
    // Not also handed to rmcp.
    let nothing = tokio::time::timeout(
        std::time::Duration::from_millis(50),
        Transport::<RoleClient>::receive(&mut wire.transport),
    )
    .await;
    assert!(nothing.is_err(), "rmcp got {nothing:?}");
}

#[tokio::test]
async fn a_call_whose_params_hold_a_meta_of_their_own_is_not_written_the_direct_way() {
    let wire = wire();
    let mut call = echo();
    call.params.meta = Some(RequestMetaObject::default());
    assert!(!super::super::outbound::writes_directly(&call));
    let direct = wire.transport.direct();
    let ids = direct.ids();
    assert!(direct
        .send(&SessionMeta::default(), &call, None, ids)
        .await
        .is_err());
}

#[tokio::test]
async fn an_error_answer_and_an_unreadable_one_fail_their_callers() {
    let mut wire = wire();
    let direct = wire.transport.direct();
    let first = send(&direct).await.expect("written");
    let second = send(&direct).await.expect("written");
    // Before 2026-07-28 the session adds nothing: only the token.
    let sent = wire.written().await;
    assert_eq!(sent["params"]["_meta"], json!({"progressToken": "aimon-1"}));
    let id = |id: &rmcp::model::RequestId| serde_json::to_string(id).expect("id");
    let error = format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":"no such tool"}}}}"#,
        id(&first.id)
    );
    // Broken JSON that still names the request it answers.
    let unreadable = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"hi"}},"#,
        id(&second.id)
    );
    for line in [error, unreadable] {
        wire.server.write_all(line.as_bytes()).await.expect("write");
        wire.server.write_all(b"\n").await.expect("write");
    }
    match answer(first.rx).await {
        Err(ServiceError::McpError(e)) => assert_eq!(e.message, "no such tool"),
        other => panic!("the server's error, not {other:?}"),
    }
    match answer(second.rx).await {
        Err(ServiceError::McpError(e)) => assert!(e.message.contains("could not be read"), "{e:?}"),
        other => panic!("an unreadable answer, not {other:?}"),
    }
    let failed = wire
        .issues
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take_failed(&second.id);
    assert!(failed.is_some(), "the client learns why");
}

#[tokio::test]
async fn a_caller_waiting_when_the_connection_ends_is_told_and_later_calls_fail() {
    let mut wire = wire();
    let direct = wire.transport.direct();
    let waiting = send(&direct).await.expect("written");
    drop(wire.server);
    assert!(waiting.rx.await.is_err(), "no answer comes");
    // The reader has ended: a new call is refused at once.
    assert!(send(&direct).await.is_err());
    let _ = wire.requests.next_line().await;
}
