//! Transports: how bytes reach a server (stdio pipes, Streamable HTTP, legacy SSE). Each one hands rmcp a `Transport` of ours, so that the
//! wrapper points of DESIGN §4 (stderr, process group, exit watchdog, wire-order tap, framing
//! checks) hold whatever rmcp does.

pub mod discover;
pub mod ended;
pub mod http;
pub mod lines;
pub mod process;
pub mod sse;
pub mod stderr;
pub mod tap;
