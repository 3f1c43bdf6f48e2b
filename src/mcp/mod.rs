//! Everything on the client side that knows MCP exists. With `demo/`, the only modules importing rmcp.

pub mod annotations;
pub mod traits;
