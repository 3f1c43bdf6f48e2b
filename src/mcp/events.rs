//! What the MCP layer reports while it works: start phases, reports, stderr lines.
//!
//! The runtime wraps these in its own `RuntimeEvent`; they are defined here so the arrow points
//! down (the MCP layer never imports the runtime).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use super::capabilities::Capabilities;
use super::elicitation::ElicitationRequest;
use super::sampling::SamplingRequest;
use super::transport::process::ExitInfo;
use crate::config::{RestartPolicy, ServerConfig, StartMode, TransportKind};

/// A start phase, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartPhase {
    /// Waiting for a start slot (`mcp.max_concurrent_starts`); its own start has not begun.
    Queued,
    /// Starting the process (stdio servers).
    Spawn,
    /// Opening the connection: DNS, TCP, TLS, and for legacy SSE the `endpoint` event (HTTP
    /// servers).
    Connect,
    /// `server/discover` or `initialize`.
    Handshake,
    /// `tools/list`, all pages.
    ListTools,
}

impl StartPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            StartPhase::Queued => "queued",
            StartPhase::Spawn => "spawn",
            StartPhase::Connect => "connect",
            StartPhase::Handshake => "handshake",
            StartPhase::ListTools => "list_tools",
        }
    }

    /// The phase a server of this transport starts in.
    pub fn first(transport: TransportKind) -> StartPhase {
        if transport.is_http() {
            StartPhase::Connect
        } else {
            StartPhase::Spawn
        }
    }
}

/// Why a server did not become ready. Each class has a hint for the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    CommandNotFound,
    SpawnFailed,
    Exited,
    HandshakeTimeout,
    ListTimeout,
    Deadline,
    ProtocolError,
    DuplicateName,
    /// HTTP: nothing accepted the TCP connection (refused, unreachable).
    ConnectRefused,
    /// HTTP: the server was reached, then dropped the connection before its answer was
    /// complete (reset, or closed mid-answer).
    ConnectionLost,
    /// HTTP: the host name did not resolve.
    DnsError,
    /// HTTP: the TLS handshake failed (certificate, protocol).
    TlsError,
    /// HTTP: the server answered with an error status (`Failure::http_status` has the code).
    HttpStatus,
    /// HTTP: connecting, or an HTTP exchange, took longer than allowed.
    Timeout,
    /// HTTP: the server wants an OAuth login (no token yet, the token was refused and could not
    /// be refreshed, or it needs more scope); `aimon-console login NAME` or the console's key.
    NeedsLogin,
    /// The server answered, but its answer could not be read (over the 16 MiB line limit,
    /// invalid UTF-8, both `result` and `error`, not JSON-RPC); the message says which.
    AnswerUnreadable,
}

impl FailureClass {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::CommandNotFound => "command_not_found",
            FailureClass::SpawnFailed => "spawn_failed",
            FailureClass::Exited => "exited",
            FailureClass::HandshakeTimeout => "handshake_timeout",
            FailureClass::ListTimeout => "list_timeout",
            FailureClass::Deadline => "deadline",
            FailureClass::ProtocolError => "protocol_error",
            FailureClass::DuplicateName => "duplicate_name",
            FailureClass::ConnectRefused => "connect_refused",
            FailureClass::ConnectionLost => "connection_lost",
            FailureClass::DnsError => "dns_error",
            FailureClass::TlsError => "tls_error",
            FailureClass::HttpStatus => "http_status",
            FailureClass::Timeout => "timeout",
            FailureClass::NeedsLogin => "needs_login",
            FailureClass::AnswerUnreadable => "answer_unreadable",
        }
    }

    /// The server could not be reached at all (nothing listening, no such host).
    pub fn is_unreachable(self) -> bool {
        match self {
            FailureClass::ConnectRefused | FailureClass::DnsError => true,
            FailureClass::CommandNotFound
            | FailureClass::SpawnFailed
            | FailureClass::Exited
            | FailureClass::HandshakeTimeout
            | FailureClass::ListTimeout
            | FailureClass::Deadline
            | FailureClass::ProtocolError
            | FailureClass::DuplicateName
            | FailureClass::ConnectionLost
            | FailureClass::TlsError
            | FailureClass::HttpStatus
            | FailureClass::Timeout
            | FailureClass::NeedsLogin
            | FailureClass::AnswerUnreadable => false,
        }
    }

    /// What to do about it, in one sentence.
    pub fn hint(self) -> &'static str {
        match self {
            FailureClass::CommandNotFound => {
                "check `command`: it is not on PATH (or the path is wrong); install the server or give an absolute path"
            }
            FailureClass::SpawnFailed => {
                "the OS refused to start it: check that `command` is executable and `cwd` exists"
            }
            FailureClass::Exited => {
                "the server exited by itself: read its stderr tail; run the command by hand to reproduce"
            }
            FailureClass::HandshakeTimeout => {
                "the server started but did not answer the handshake in time: raise `request_timeout` or check it speaks MCP on stdio"
            }
            FailureClass::ListTimeout => {
                "the server did not answer tools/list in time: raise `request_timeout` or look at its stderr"
            }
            FailureClass::Deadline => {
                "the whole start-up deadline passed first: raise `mcp.startup_budget` or the server's `request_timeout`"
            }
            FailureClass::ProtocolError => {
                "the server broke the protocol: a stdio server must write only JSON-RPC on stdout (logs belong on stderr); an HTTP `url` must be the MCP endpoint itself"
            }
            FailureClass::DuplicateName => {
                "two servers share this name: rename one (names must be unique)"
            }
            FailureClass::ConnectRefused => {
                "nothing accepted the connection: check that the server is running and `url` has the right host and port"
            }
            FailureClass::ConnectionLost => {
                "the server took the connection, then dropped it before its answer was complete: it may have crashed or restarted, or a proxy cut it; read the server's logs"
            }
            FailureClass::DnsError => {
                "the host name in `url` did not resolve: check the spelling, or your DNS and network"
            }
            FailureClass::TlsError => {
                "the TLS handshake failed: check the certificate (expired, self-signed, wrong host) or use the right scheme (http/https)"
            }
            FailureClass::HttpStatus => {
                "the server answered with an HTTP error: check `url` (the MCP endpoint path) and the server's logs"
            }
            FailureClass::Timeout => {
                "the server did not answer in time: check the network path, or raise `request_timeout`"
            }
            FailureClass::NeedsLogin => {
                "the server wants an OAuth login: run `aimon-console login <server>` (in the console: o on the server); it starts once the token arrives"
            }
            FailureClass::AnswerUnreadable => {
                "the server answered with something that cannot be read (too large, not UTF-8, not JSON-RPC): fix the server, or ask it for less (the line limit is 16 MiB)"
            }
        }
    }
}

/// Why one server failed, with what it left behind. Serialized with its [`Failure::hint`]
/// (`check --json`'s `failure.hint`).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct Failure {
    pub class: FailureClass,
    /// The phase it was in (`null` when it never started, e.g. a duplicate name).
    pub phase: Option<StartPhase>,
    pub message: String,
    /// How the process ended, when it did.
    pub exit_status: Option<ExitInfo>,
    /// The last stderr lines (sanitized).
    pub stderr_tail: Vec<String>,
    /// The HTTP status code, for `http_status`.
    pub http_status: Option<u16>,
}

impl Serialize for Failure {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("Failure", 7)?;
        out.serialize_field("class", &self.class)?;
        out.serialize_field("phase", &self.phase)?;
        out.serialize_field("message", &self.message)?;
        out.serialize_field("exit_status", &self.exit_status)?;
        out.serialize_field("stderr_tail", &self.stderr_tail)?;
        out.serialize_field("http_status", &self.http_status)?;
        out.serialize_field("hint", self.hint())?;
        out.end()
    }
}

impl Failure {
    /// What to do about it: the class's hint, or for 401/403 that the server wants credentials.
    pub fn hint(&self) -> &'static str {
        match (self.class, self.http_status) {
            (FailureClass::HttpStatus, Some(401 | 403)) => {
                "the server wants credentials: set `bearer_token` (e.g. ${TOKEN}) or an Authorization header, and check the token is valid and allowed"
            }
            (class, _) => class.hint(),
        }
    }
}

/// Where a server stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerStatus {
    Starting,
    Ready,
    Failed,
    Disabled,
    /// `start: lazy` and not running: its tools are those of its cached list, and its first
    /// call starts it.
    Idle,
}

impl ServerStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ServerStatus::Starting => "starting",
            ServerStatus::Ready => "ready",
            ServerStatus::Failed => "failed",
            ServerStatus::Disabled => "disabled",
            ServerStatus::Idle => "idle",
        }
    }
}

/// Phase end times, each measured from that server's own start; `None` when not reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
pub struct PhaseTimes {
    /// How long it waited for a start slot before its own start (`mcp.max_concurrent_starts`);
    /// `None` when it did not wait.
    pub queued_ms: Option<u64>,
    /// stdio servers only.
    pub spawn_ms: Option<u64>,
    /// HTTP servers only.
    pub connect_ms: Option<u64>,
    pub handshake_ms: Option<u64>,
    pub list_tools_ms: Option<u64>,
}

/// What the server said about itself.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
}

/// The start-up report of one server (the `servers[]` objects of `check --json`).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ServerReport {
    pub name: String,
    pub transport: TransportKind,
    pub status: ServerStatus,
    /// When it is started (`eager`, or `lazy`: on its first call).
    pub start: StartMode,
    pub protocol_version: Option<String>,
    pub server_info: Option<ServerInfo>,
    pub phases: PhaseTimes,
    pub tools: usize,
    pub warnings: Vec<String>,
    pub failure: Option<Failure>,
    /// What it said it can do in its handshake (`None` until it got that far).
    pub capabilities: Option<Capabilities>,
    /// Its `instructions` from the handshake (sanitized, newlines kept, bounded).
    pub instructions: Option<String>,
    /// The sandbox it runs under, in words (`src/sandbox.rs`); `None`: none configured.
    pub sandbox: Option<String>,
    /// When its start began and ended, from the start of start-up.
    #[serde(flatten)]
    pub timeline: Timeline,
}

/// When a server's own start began and ended, in milliseconds from the start of start-up (the
/// manager's first `launch`). Its own start begins once it leaves the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
pub struct Timeline {
    pub started_at_ms: Option<u64>,
    pub ready_at_ms: Option<u64>,
    pub failed_at_ms: Option<u64>,
}

impl ServerReport {
    /// The report of a server that is not started (`enabled: false`).
    pub fn disabled(config: &ServerConfig) -> ServerReport {
        ServerReport::blank(config, ServerStatus::Disabled)
    }

    /// The report of a lazy server not started, listing its `tools` cached ones.
    pub fn idle(config: &ServerConfig, tools: usize) -> ServerReport {
        ServerReport {
            tools,
            ..ServerReport::blank(config, ServerStatus::Idle)
        }
    }

    /// The report of a server whose start has not ended yet.
    pub fn starting(config: &ServerConfig) -> ServerReport {
        ServerReport::blank(config, ServerStatus::Starting)
    }

    /// A failed report for `config`.
    pub fn failed(config: &ServerConfig, phases: PhaseTimes, failure: Failure) -> ServerReport {
        ServerReport {
            phases,
            failure: Some(failure),
            ..ServerReport::blank(config, ServerStatus::Failed)
        }
    }

    fn blank(config: &ServerConfig, status: ServerStatus) -> ServerReport {
        ServerReport {
            name: config.name.clone(),
            transport: config.transport,
            status,
            start: config.start,
            protocol_version: None,
            server_info: None,
            phases: PhaseTimes::default(),
            tools: 0,
            warnings: Vec::new(),
            failure: None,
            capabilities: None,
            instructions: None,
            sandbox: None,
            timeline: Timeline::default(),
        }
    }

    /// How long its own start took, frozen once it ended (queue wait not included).
    pub fn start_took(&self) -> Option<Duration> {
        let end = self.timeline.ready_at_ms.or(self.timeline.failed_at_ms)?;
        let begin = self.timeline.started_at_ms.unwrap_or(end);
        Some(Duration::from_millis(end.saturating_sub(begin)))
    }
}

/// One event of the MCP layer.
#[derive(Debug, Clone, PartialEq)]
pub enum McpEvent {
    /// A server entered a start phase, `elapsed` after its own start.
    PhaseStarted {
        server: String,
        phase: StartPhase,
        elapsed: Duration,
    },
    /// A server finished starting (ready, failed or disabled).
    ServerStarted(Box<ServerReport>),
    /// A line a server wrote on stderr (sanitized).
    Stderr { server: String, line: String },
    /// A server was closed.
    ServerClosed { server: String },
    /// A ready server went away by itself: its process exited (`exit` says how) or its
    /// connection was lost. Its tools answer `disconnected` until it is back. `crashes` counts
    /// the quick crashes in a row, this one included (0 when it had been up past the window);
    /// `restart` says whether the supervisor will start it again.
    ServerDown {
        server: String,
        exit: Option<ExitInfo>,
        reason: String,
        at: SystemTime,
        uptime: Duration,
        crashes: u32,
        restart: RestartPolicy,
    },
    /// The supervisor will start the server again after `delay` (`attempt` counts the restarts
    /// since it was last up for the quick window; `crashes` as in `ServerDown`). The start's
    /// phases and report then arrive as the usual `PhaseStarted` and `ServerStarted`.
    RestartScheduled {
        server: String,
        attempt: u32,
        delay: Duration,
        crashes: u32,
    },
    /// The supervisor stopped restarting the server after `crashes` quick crashes in a row; it
    /// stays down until the operator restarts it, which resets the count.
    GaveUp { server: String, crashes: u32 },
    /// A server sent the console a request (`roots/list`, `ping`, `sampling/createMessage`,
    /// `elicitation/create`, …) and this is how it was answered.
    ServerRequest {
        server: String,
        method: String,
        outcome: RequestOutcome,
        /// What was answered, or why it was declined, in words.
        detail: String,
    },
    /// A server asks the operator for input (`elicitation/create`): answer it through the
    /// request (dropping it declines). How it was answered follows as a `ServerRequest`.
    ElicitationRequested(ElicitationRequest),
    /// A server asks the console's model for a message (`sampling/createMessage`; only with a
    /// model configured): answer or reject it through the request (dropping it rejects). How
    /// it was answered follows as a `ServerRequest`.
    SamplingRequested(SamplingRequest),
}

/// How the console answered a request from a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestOutcome {
    /// Answered with a result.
    Answered,
    /// Refused (a decline result or an error answer), with the reason in `detail`.
    Declined,
}

impl RequestOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            RequestOutcome::Answered => "answered",
            RequestOutcome::Declined => "declined",
        }
    }
}

/// Where MCP events go. Must not block.
pub type EventSink = Arc<dyn Fn(McpEvent) + Send + Sync>;

/// A sink that drops everything.
pub fn null_sink() -> EventSink {
    Arc::new(|_| {})
}

/// Milliseconds since `start`, for phase times.
pub(crate) fn since(start: std::time::Instant) -> Option<u64> {
    Some(crate::text::millis(start.elapsed()))
}
