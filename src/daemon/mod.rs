//! `aimon-console daemon`: the runtime headless (servers, supervisor, gate, telemetry) behind
//! an operator API that consoles attach to (docs/daemon.md). The API is JSON-RPC 2.0, one
//! message a line, over a Unix socket only its owner may use (socket.rs); every console sees
//! the same servers, calls and approvals, the first answer to an approval wins and the others
//! are told who gave it (hub.rs); each console is served on its own (session.rs), so one that
//! stops reading loses its own events, counted, and holds up nobody.
//!
//! Above the agent and below the drivers: `cli/daemon.rs` runs it, and the console's `attach`
//! will be its client.

pub mod client;
mod content;
mod edits;
mod hub;
mod models;
mod notify;
mod questions;
mod sampling;
mod session;
mod sessions;
pub mod socket;
pub mod tcp;
pub mod wire;

use std::future::Future;
use std::path::Path;
use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::net::UnixListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::runtime::{
    event_json, AgentRuntimeFactory, Attended, EventStream, ListKind, McpEvent, RuntimeEvent,
};
use hub::Hub;
pub use hub::{CONSOLE_QUEUE, HISTORY};
use questions::{Asked, Asks};
use session::Peer;
use tcp::Tcp;
use wire::notification;

/// How long a stop waits for the prompts it cancelled to record how they ended.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);
/// How long a stop waits for the consoles' connections to send what is queued for them.
const FAREWELL: std::time::Duration = std::time::Duration::from_secs(1);
/// Most consoles connected over TCP at once (authenticated or not); more are let go at once.
const TCP_CONSOLES: usize = 64;
/// How long the daemon waits after a failed accept (no file descriptor left, say) before the
/// next, so a lasting failure does not spin.
const ACCEPT_BACKOFF: std::time::Duration = std::time::Duration::from_millis(100);

/// The gateway's socket and the token hosts bring (`gateway.listen`).
pub type Gateway = (tokio::net::TcpListener, String);

/// Runs a daemon for `config` on `listener` (bound at `path`, removed at the end), on `tcp`
/// when the config listens there too, and serving other MCP hosts on `gateway` (their calls
/// through the same gate, their approvals to the consoles), until `stop` resolves: then
/// running calls are cancelled, waiting approvals denied, the consoles told, the servers
/// closed.
pub async fn run(
    config: Config,
    (listener, tcp, gateway): (UnixListener, Option<Tcp>, Option<Gateway>),
    path: &Path,
    stop: impl Future<Output = ()>,
) -> Result<(), String> {
    let (events, stream) = AgentRuntimeFactory::events();
    let options = crate::runtime::RuntimeOptions {
        serves_hosts: gateway.is_some(),
        ..crate::telemetry::options(&config)
    };
    let runtime = AgentRuntimeFactory::create(&config, options, events)
        .await
        .map_err(|e| e.to_string())?;
    let runtime = Arc::new(runtime);
    let settings = config.gateway.clone();
    let hub = Arc::new(Hub::new(runtime.clone(), config));
    if let Some((listener, token)) = gateway {
        // While a console is attached, a host's call that asks waits for a console's answer,
        // as the consoles' own do; with none, `gateway.unattended` decides (and the hub
        // refuses what would ask). It ends when the runtime closes.
        let attached = Arc::downgrade(&hub);
        let attended = Attended::While(Arc::new(move || {
            attached.upgrade().is_some_and(|hub| hub.consoles() > 0)
        }));
        let serving = runtime.clone();
        tokio::spawn(async move {
            if let Err(e) = serving
                .serve_http(listener, token, &settings, attended)
                .await
            {
                tracing::warn!(error = %e, "daemon: serving hosts ended");
            }
        });
    }
    let pump = tokio::spawn(pump(hub.clone(), stream));
    let sessions = CancellationToken::new();
    let connections = TaskTracker::new();
    let tcp_room = Arc::new(tokio::sync::Semaphore::new(TCP_CONSOLES));
    notify::notify("READY=1");
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => accepted,
            conn = accept_tcp(tcp.as_ref()) => {
                let Some(tcp) = &tcp else { continue };
                let conn = match conn {
                    Ok(conn) => conn,
                    Err(e) => {
                        tracing::warn!(error = %e, "daemon: TCP accept failed");
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                        continue;
                    }
                };
                let Ok(room) = tcp_room.clone().try_acquire_owned() else {
                    tracing::warn!("daemon: {TCP_CONSOLES} consoles over TCP already; one more let go");
                    continue;
                };
                let peer = Peer { pid: None, token: Some(tcp.token.clone()) };
                let stop = sessions.child_token();
                let tls = tcp.tls.clone();
                let hub = hub.clone();
                connections.spawn(async move {
                    serve_tls(hub, tls, conn, peer, stop).await;
                    drop(room);
                });
                continue;
            }
        };
        let mut stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "daemon: accept failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        match socket::peer(&stream) {
            Ok(pid) => {
                let peer = Peer { pid, token: None };
                connections.spawn(session::run(
                    hub.clone(),
                    stream,
                    peer,
                    sessions.child_token(),
                ));
            }
            Err(e) => {
                tracing::warn!(error = %e, "daemon: a connection was refused");
                let line = wire::error_response(
                    &serde_json::Value::Null,
                    wire::code::INVALID_REQUEST,
                    &format!("refused: {e}"),
                );
                let _ = stream.write_all(format!("{line}\n").as_bytes()).await;
            }
        }
    }
    notify::notify("STOPPING=1");
    hub.broadcast(notification(
        "closing",
        serde_json::json!({"reason": "the daemon is stopping"}),
    ));
    hub.drop_pending();
    hub.questions.give_up_all();
    hub.samplings.give_up_all();
    hub.models.clear().await;
    // Prompts stop first (their transcripts say so), then the servers.
    sessions.cancel();
    hub.sessions.settle(SETTLE).await;
    runtime.close().await;
    let _ = pump.await;
    connections.close();
    let _ = tokio::time::timeout(FAREWELL, connections.wait()).await;
    socket::release(path);
    Ok(())
}

/// The next TCP connection, when the daemon listens on TCP (never, when it does not).
async fn accept_tcp(tcp: Option<&Tcp>) -> std::io::Result<tokio::net::TcpStream> {
    let Some(tcp) = tcp else {
        return std::future::pending().await;
    };
    let (conn, _) = tcp.listener.accept().await?;
    let _ = conn.set_nodelay(true);
    Ok(conn)
}

/// A TCP console: its TLS handshake (within `tcp::HANDSHAKE`), then its session.
async fn serve_tls(
    hub: Arc<Hub>,
    tls: tokio_rustls::TlsAcceptor,
    conn: tokio::net::TcpStream,
    peer: Peer,
    stop: CancellationToken,
) {
    match tokio::time::timeout(tcp::HANDSHAKE, tls.accept(conn)).await {
        Ok(Ok(stream)) => session::run(hub, stream, peer, stop).await,
        Ok(Err(e)) => tracing::warn!(error = %e, "daemon: a TLS handshake failed"),
        Err(_) => tracing::warn!("daemon: a TLS handshake took too long"),
    }
}

/// The runtime's events to every console, as `event` notifications; approvals, servers'
/// questions and sampling requests kept for the consoles to answer; a tools list change taken
/// in at once (there are no turns here, every moment is between them).
async fn pump(hub: Arc<Hub>, mut stream: EventStream) {
    while let Some(event) = stream.recv().await {
        let json = event_json(&event);
        let line = notification("event", json.clone());
        match event {
            RuntimeEvent::ApprovalRequested(request) => hub.ask(request, json.to_string()),
            RuntimeEvent::CallFinished { id, .. } => hub.call_ended(id),
            // Between turns only: while a prompt runs, its conversation takes the change in
            // at its next turn.
            RuntimeEvent::ListChanged {
                list: ListKind::Tools,
                ..
            } if hub.sessions.running() == 0 => boundary(&hub),
            RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)) => {
                keep(
                    &hub,
                    |hub| &hub.questions,
                    request,
                    &json,
                    "elicitation_withdrawn",
                );
            }
            RuntimeEvent::Mcp(McpEvent::SamplingRequested(request)) => {
                keep(
                    &hub,
                    |hub| &hub.samplings,
                    request,
                    &json,
                    "sampling_withdrawn",
                );
            }
            _ => {}
        }
        hub.broadcast(line);
    }
}

/// A server's request (its event `json`) kept for the consoles to answer, every console told
/// (`withdrawn`) when its server withdraws it; given up at once when no console is attached:
/// nobody is there to answer it.
fn keep<R: Asked + Send + Sync + 'static>(
    hub: &Arc<Hub>,
    asks: fn(&Hub) -> &Asks<R>,
    request: R,
    json: &serde_json::Value,
    withdrawn: &'static str,
) {
    if hub.consoles() == 0 {
        return request.give_up("no console is attached to the daemon to answer it");
    }
    let (watcher, watched) = (hub.clone(), request.clone());
    tokio::spawn(async move {
        watched.closed().await;
        if asks(&watcher).withdrawn(watched.id()) {
            let said = serde_json::json!({"id": watched.id(), "server": watched.server()});
            watcher.broadcast(notification(withdrawn, said));
        }
    });
    asks(hub).keep(request, json.to_string());
}

/// A turn boundary in the background, one at a time.
fn boundary(hub: &Arc<Hub>) {
    let hub = hub.clone();
    tokio::spawn(async move {
        let _one = hub.boundary.lock().await;
        hub.runtime.turn_boundary().await;
    });
}
