//! The local tools (`read`, `bash`, and with an agent `read_result`): ordinary `Tool`s with
//! fixed traits, no server involved.
//!
//! Each tool lives in its own file under `local/`; this file holds what they share.

mod bash;
mod read;
pub mod read_result;

pub use bash::BashTool;
pub use read::ReadTool;
pub use read_result::ReadResultTool;

use std::sync::Arc;

use super::{schema, JsonText, Tool, ToolInput};
use crate::config::SandboxConfig;

/// Every local tool, ready to register; `bash` under `bash_sandbox`.
pub fn all(bash_sandbox: &SandboxConfig) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadTool::new()),
        Arc::new(BashTool::new(Some(bash_sandbox.clone()))),
    ]
}

/// Checks `input` against a local tool's own schema; `Err` carries an operator-readable message.
fn check_input(tool: &str, input_schema: &JsonText, input: &ToolInput) -> Result<(), String> {
    let args = serde_json::Value::Object(input.0.clone());
    schema::validate(input_schema.parsed(), &args)
        .map_err(|errors| format!("invalid arguments for {tool}: {}", errors.join("; ")))
}

/// Cuts `text` to at most `max` bytes on a character boundary; true when something was cut.
fn truncate_utf8(text: &mut String, max: usize) -> bool {
    if text.len() <= max {
        return false;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_respects_char_boundaries() {
        let mut s = "aé".to_string(); // 'é' is two bytes
        assert!(truncate_utf8(&mut s, 2));
        assert_eq!(s, "a");
        let mut t = "abc".to_string();
        assert!(!truncate_utf8(&mut t, 3));
    }

    #[test]
    fn all_local_tools_have_unique_names() {
        let names: Vec<String> = all(&SandboxConfig::default())
            .iter()
            .map(|t| t.descriptor().name.clone())
            .collect();
        assert_eq!(names, vec!["read", "bash"]);
    }
}
