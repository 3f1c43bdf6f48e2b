//! The built-in demo MCP server (rmcp's server side).
