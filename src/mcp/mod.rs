//! Everything on the client side that knows MCP exists. With `demo/`, the only modules importing rmcp.

pub mod annotations;
pub mod auth;
pub mod capabilities;
pub mod client;
pub mod elicitation;
pub mod events;
pub mod face;
pub mod face_http;
pub mod form;
mod handler;
pub mod listed;
pub mod manager;
pub mod notify;
pub mod prompts;
pub mod resources;
pub mod rewake;
pub mod sampling;
pub mod session;
mod start;
pub mod supervisor;
mod tasks;
mod text_format;
pub mod tool;
pub mod traits;
pub mod transport;
pub mod uri_template;
