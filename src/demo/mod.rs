//! The built-in demo MCP server (rmcp's server side): a playground for the console, the server behind
//! `config.example.yaml`, and a fault-injecting fixture for the client's tests.
//!
//! The handler ([`DemoServer`]) knows nothing about transports: [`serve`] runs it over any rmcp
//! transport (tests use an in-memory duplex), [`serve_stdio`] is the thin stdin/stdout entry used by
//! `aimon-console demo-server`, and [`serve_http`] serves it over Streamable HTTP (`--http`). Faults that act on the process itself
//! (exit codes, stderr text, garbage on stdout, stray children) belong to the CLI entry, not here;
//! faults of the HTTP endpoint ([`HttpFaults`]) act on its sockets, so they are here.
//!
//! The demo model ([`serve_model`], `aimon-console demo-model`) is a model endpoint speaking
//! Chat Completions, Anthropic's Messages or OpenAI's Responses (`model_wires/`), answering by
//! fixed rules (`model_rules.rs`), for the agent.

mod annotations;
mod ask;
mod auth;
mod auth_http;
mod content;
mod dpop;
mod extra;
mod handler;
mod http;
mod http_faults;
mod http_listing;
mod live;
mod model;
mod model_rules;
mod model_wires;
mod skills;
mod stdio;
mod tools;
mod wire;

#[cfg(test)]
mod tests;

use std::time::Duration;

pub use crate::net::bind_address;
pub use auth::DemoAuth;
pub use dpop::DemoDpop;
pub use handler::DemoServer;
pub use http::{serve_http, HttpFaults, MCP_PATH};
pub use http_faults::SocketFault;
pub use model::{serve_model, ModelFaults, DEMO_MODEL_NAME};
pub use model_rules::{
    long_answer, Rules as ModelRules, ScriptCall, ScriptTurn, BAD_ARGUMENTS, HELP as MODEL_HELP,
    INVENTED_TOOL,
};
pub use model_wires::DemoWire;
pub use skills::{DemoSkills, SKILL_URI};
pub use stdio::serve_stdio;
pub use wire::{WireFaults, MALFORMED_TOOLS};

/// Name the demo server reports in its `serverInfo`.
pub const SERVER_NAME: &str = "aimon-demo";

/// Behaviour switches the handler reads; every field defaults to "well-behaved".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DemoOptions {
    /// Wait this long before answering the handshake (`initialize` or `server/discover`).
    pub init_delay: Duration,
    /// Wait this long before answering `tools/list`.
    pub tools_delay: Duration,
    /// Never answer the handshake.
    pub hang_init: bool,
    /// The mutating tools claim to be read-only and non-destructive.
    pub lie: bool,
    /// No tool carries annotations (wins over `lie`).
    pub no_annotations: bool,
    /// Terminal escape sequences in tool descriptions and results, the instructions, resource
    /// text, prompt messages and the `ask` question (the client must not let them reach the
    /// operator's terminal).
    pub evil: bool,
    /// `add`'s description carries a tool-poisoning payload (Invariant Labs' published one:
    /// an `<IMPORTANT>` block that reads the client's config and keeps it from the user).
    pub poison: bool,
    /// A rug pull: once `write_note` has been called, this file is made and the tool list
    /// changes (`tools/list_changed`): `write_note` gets another description and a `tags`
    /// argument. While the file is there, every start serves the changed tool.
    pub rug_pull: Option<std::path::PathBuf>,
    /// Serve this many generated trivial tools (`extra_0` …) besides the five real ones.
    pub extra_tools: usize,
    /// Answer `tools/list` in pages of this many tools (`nextCursor`); `None`: one page.
    pub tools_page: Option<usize>,
    /// The `ttlMs` of every `tools/list` answer; `None`: not said.
    pub tools_ttl: Option<u64>,
    /// Also serve `flood`, `change_tools`, `crash` and `never_answer` (see `live.rs`), and
    /// `ask` (`ask.rs`).
    pub live_tools: bool,
    /// List this many generated resources (`demo://extra/N`) besides the real ones.
    pub extra_resources: usize,
    /// Every result of a call goes on with this many bytes of numbered filler lines: long
    /// results from any tool.
    pub result_pad: usize,
    /// Serve only these tools (none: all): a short tool list for a small model's window.
    pub only_tools: Vec<String>,
    /// Speak protocol 2025-11-25 only: answer `server/discover` with method-not-found, as
    /// servers from before 2026-07-28 do, so the client uses `initialize` (and `ask` can send
    /// `elicitation/create`, a server-to-client request 2026-07-28 no longer has).
    pub legacy: bool,
    /// Serve the `note-taking` skill (the skills extension), as listed or tampered with.
    pub skills: DemoSkills,
}

/// What `evil` puts in descriptions, results and stderr: a window-title change, a screen
/// clear, a colour and a bell.
pub const EVIL: &str = "\x1b]0;pwned\x07\x1b[2J\x1b[31m\x07";

/// Errors from running the demo server.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The MCP handshake did not complete (the client went away, or sent something else first).
    #[error("demo server handshake failed: {0}")]
    Handshake(Box<rmcp::service::ServerInitializeError>),
    /// The service loop ended abnormally.
    #[error("demo server stopped: {0}")]
    Join(#[from] tokio::task::JoinError),
    /// Reading stdin failed.
    #[error("demo server i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// Serve the demo server over `transport` until the peer closes it (also before the handshake).
pub async fn serve<T, E, A>(opts: DemoOptions, transport: T) -> Result<(), DemoError>
where
    T: rmcp::transport::IntoTransport<rmcp::RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    use rmcp::service::ServerInitializeError;
    use rmcp::ServiceExt;
    let running = match DemoServer::new(opts).serve(transport).await {
        Ok(running) => running,
        // The client left before finishing the handshake (gave up, or only probed): a normal end.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(DemoError::Handshake(Box::new(error))),
    };
    running.waiting().await?;
    Ok(())
}
