//! Transports: how bytes reach a server (stdio pipes, Streamable HTTP, legacy SSE). Each one hands
//! rmcp a `Transport` of ours, so that the wrapper points of docs/ARCHITECTURE.md §4 (stderr,
//! process group, exit watchdog, wire-order tap, framing checks) hold whatever rmcp does.

pub mod answers;
pub mod direct;
pub mod discover;
pub mod ended;
pub mod era;
pub mod http;
pub mod http_answer;
pub mod http_direct;
pub mod http_pages;
pub mod issues;
pub mod lines;
pub mod outbound;
pub mod process;
pub mod reaper;
pub mod sse;
pub mod stderr;
pub mod tap;
pub mod tool_page;
pub mod unreadable;
