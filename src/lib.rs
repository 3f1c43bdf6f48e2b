//! aimon-console as a library: the layers of docs/ARCHITECTURE.md §2, re-exported for the binary
//! and the tests.
//!
//! Dependencies point down only: `cli` → `runtime` → `approval` / `mcp` → `tool` → `config`.

pub mod agent;
pub mod approval;
pub mod child_mark;
pub mod cli;
pub mod config;
pub mod daemon;
pub mod demo;
pub mod dpop;
pub mod mcp;
pub mod net;
pub mod runtime;
pub mod sandbox;
pub mod sse;
pub mod telemetry;
pub mod text;
pub mod tool;
pub mod tui;
