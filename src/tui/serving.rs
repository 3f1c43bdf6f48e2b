//! The console as a gateway too (`--serve-http ADDR`, or `gateway.listen`): the socket other MCP hosts reach it on,
//! and each runtime the console starts serving them on it until that runtime closes. Their
//! calls go through the same gate, so a mutating one asks in the approval modal.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::messages::{AppEvent, Level};
use crate::config::GatewayConfig;
use crate::runtime::{AgentRuntime, Attended};

/// The socket hosts reach the console's gateway on, and the token they bring. Each runtime
/// the console starts (a restart-all makes a new one) serves on it until it closes.
#[derive(Debug)]
pub struct Serving {
    pub listener: std::net::TcpListener,
    pub token: String,
}

impl Serving {
    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        match self.listener.local_addr() {
            Ok(addr) => format!("http://{addr}/mcp"),
            Err(_) => "its socket".to_string(),
        }
    }
}

/// Serves other MCP hosts from `runtime` on the console's socket until that runtime closes;
/// their calls ask the operator as every other call does.
pub(super) async fn serve_hosts(
    runtime: Arc<AgentRuntime>,
    serving: &Serving,
    gateway: &GatewayConfig,
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let listener = serving
        .listener
        .try_clone()
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .and_then(tokio::net::TcpListener::from_std);
    match listener {
        Ok(listener) => {
            let token = serving.token.clone();
            let gateway = gateway.clone();
            tokio::spawn(async move {
                if let Err(e) = runtime
                    .serve_http(listener, token, &gateway, Attended::Always)
                    .await
                {
                    tracing::warn!(error = %e, "serving hosts ended");
                }
            });
        }
        Err(e) => {
            let _ = app_tx
                .send(AppEvent::Notice(
                    Level::Error,
                    format!("cannot serve other hosts: {e}"),
                ))
                .await;
        }
    }
}
